// Runs inside a real VS Code extension host with the example workspace open (see test/e2e/extensionHost.test.ts).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';

const EXTENSION_ID = 'qat-studio.qat-studio';

function waitForDiagnostics(
  uri: vscode.Uri,
  predicate: (d: readonly vscode.Diagnostic[]) => boolean,
  timeoutMs = 20_000,
) {
  return new Promise<readonly vscode.Diagnostic[]>((resolve, reject) => {
    const check = () => {
      const d = vscode.languages.getDiagnostics(uri);
      if (predicate(d)) {
        sub.dispose();
        clearTimeout(timer);
        resolve(d);
        return true;
      }
      return false;
    };
    const sub = vscode.languages.onDidChangeDiagnostics((e) => {
      if (e.uris.some((u) => u.toString() === uri.toString())) check();
    });
    const timer = setTimeout(() => {
      sub.dispose();
      reject(
        new Error(`diagnostics for ${uri} never matched: ${JSON.stringify(vscode.languages.getDiagnostics(uri))}`),
      );
    }, timeoutMs);
    check();
  });
}

describe('QAT Studio in the extension host', () => {
  const ws = () => vscode.workspace.workspaceFolders![0].uri;

  it('activates and registers its commands', async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, 'extension not found');
    await ext.activate();
    const commands = await vscode.commands.getCommands(true);
    for (const id of ['qatStudio.compareLayers', 'qatStudio.showKernelInfo', 'qatStudio.restartKernel'])
      assert.ok(commands.includes(id), id);
  });

  it("the walkthrough's steps have their media, and every command they name or wait for is registered", async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    const walkthroughs = ext.packageJSON.contributes.walkthroughs as Array<{
      id: string;
      steps: Array<{ id: string; description: string; media: { markdown: string }; completionEvents: string[] }>;
    }>;
    const steps = walkthroughs.find((w) => w.id === 'qatStudio.gettingStarted')?.steps ?? [];
    assert.deepEqual(
      steps.map((s) => s.id),
      ['kernel', 'openConfig', 'compare', 'fix', 'build'],
    );
    const commands = new Set(await vscode.commands.getCommands(true));
    for (const step of steps) {
      await vscode.workspace.fs.stat(vscode.Uri.joinPath(ext.extensionUri, step.media.markdown));
      const linked = [...step.description.matchAll(/\(command:([\w.]+)/g)].map((m) => m[1]);
      const waited = step.completionEvents.filter((e) => e.startsWith('onCommand:')).map((e) => e.slice(10));
      assert.ok(linked.length > 0 && step.completionEvents.length > 0, `${step.id}: no command or completion event`);
      for (const id of [...linked, ...waited]) assert.ok(commands.has(id), `${step.id}: ${id} is not registered`);
    }
  });

  it('QAT: Open a QAT Config (the walkthrough step) asks which config when there are several and opens it', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    let done = false;
    const opened = (vscode.commands.executeCommand('qatStudio.openConfig') as Thenable<vscode.Uri | undefined>).then(
      (uri) => {
        done = true;
        return uri;
      },
    );
    // The workspace has several configs: accept the quick pick's first item once it shows.
    for (let i = 0; i < 100 && !done; i++) {
      await new Promise((r) => setTimeout(r, 200));
      if (!done) await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    }
    const uri = await opened;
    assert.ok(uri && /\.qat\.ya?ml$/.test(uri.fsPath), `opened ${uri?.fsPath}`);
    assert.equal(vscode.window.activeTextEditor?.document.uri.toString(), uri.toString());
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('QAT: Open an Example copies the cifar and tinylm examples (without their out/) into the folder given; digits is this workspace', async () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'qat-ext-example-'));
    const dest = await vscode.commands.executeCommand<string>('qatStudio.openExample', {
      name: 'cifar',
      parent,
      open: false,
    });
    assert.equal(dest, path.join(parent, 'qat-example-cifar'));
    const files = fs.readdirSync(dest).sort();
    for (const f of ['README.md', 'data.py', 'mobilenetv2.qat.yaml', 'model.py', 'resnet18.qat.yaml'])
      assert.ok(files.includes(f), files.join(', '));
    assert.ok(!files.includes('out') && !files.some((f) => f.endsWith('.partial')), files.join(', '));
    // A second copy goes beside the first, never over it.
    const again = await vscode.commands.executeCommand<string>('qatStudio.openExample', {
      name: 'cifar',
      parent,
      open: false,
    });
    assert.equal(again, path.join(parent, 'qat-example-cifar-2'));
    // The language model: its code and config, the text it trains on comes with Python.
    const lm = await vscode.commands.executeCommand<string>('qatStudio.openExample', {
      name: 'tinylm',
      parent,
      open: false,
    });
    assert.deepEqual(fs.readdirSync(lm).sort(), ['README.md', 'data.py', 'model.py', 'tinylm.qat.yaml']);
    assert.equal(
      await vscode.commands.executeCommand<string>('qatStudio.openExample', { name: 'digits', parent, open: false }),
      ws().fsPath,
    );
  });

  it('publishes QCFG001 for a quant_max outside quint8, and clears it after the fix', async () => {
    const uri = vscode.Uri.joinPath(ws(), 'bad-range.qat.yaml');
    const doc = await vscode.workspace.openTextDocument(uri);
    const editor = await vscode.window.showTextDocument(doc);
    const diags = await waitForDiagnostics(uri, (d) => d.some((x) => x.code === 'QCFG001'));
    const hit = diags.find((x) => x.code === 'QCFG001')!;
    assert.equal(hit.message, 'quant_max 300 is outside the range of quint8 (0..255).');
    assert.equal(doc.getText(hit.range), '300');
    await editor.edit((e) => e.replace(hit.range, '255'));
    await waitForDiagnostics(uri, (d) => d.length === 0);
    await vscode.commands.executeCommand('workbench.action.files.revert');
  });

  it('publishes QAT001 for prepare_qat after eval() in a Python script, none for the example script', async () => {
    const doc = await vscode.workspace.openTextDocument({
      language: 'python',
      content: 'from torch.ao.quantization import prepare_qat\nmodel.eval()\nmodel = prepare_qat(model)\n',
    });
    const diags = await waitForDiagnostics(doc.uri, (d) => d.some((x) => x.code === 'QAT001'));
    assert.equal(diags.find((d) => d.code === 'QAT001')!.range.start.line, 2);
    const script = vscode.Uri.joinPath(ws(), 'qat_train.py');
    await vscode.workspace.openTextDocument(script);
    // The first publish for an opened document is its full analysis; the clean example must have none.
    await waitForDiagnostics(script, () => true, 100).catch(() => undefined);
    await new Promise<void>((resolve) => {
      const sub = vscode.languages.onDidChangeDiagnostics((e) => {
        if (e.uris.some((u) => u.toString() === script.toString())) {
          sub.dispose();
          resolve();
        }
      });
      setTimeout(() => {
        sub.dispose();
        resolve();
      }, 3000);
    });
    // Hints (e.g. migrating eager QAT to PT2E) are fine; nothing may warn or err on the working example.
    assert.deepEqual(
      vscode.languages
        .getDiagnostics(script)
        .filter((d) => d.source === 'qat-studio' && d.severity <= vscode.DiagnosticSeverity.Warning),
      [],
    );
  });

  it('QAT: Show Kernel Info starts the real kernel and reports torch and torchao', async () => {
    const info = await vscode.commands.executeCommand<{
      python: string;
      packages: Record<string, { version: string | null }>;
    }>('qatStudio.showKernelInfo');
    assert.ok(info, 'no kernel info returned');
    assert.match(info.python, /^3\.\d+/);
    assert.match(info.packages.torch.version ?? '', /^2\.13\.0/);
    assert.ok(info.packages.torchao.version, 'torchao missing');
  });

  async function runTask(job: string, config: string): Promise<number | undefined> {
    const tasks = await vscode.tasks.fetchTasks({ type: 'qat' });
    const task = tasks.find((t) => t.definition.job === job && t.definition.config === config);
    assert.ok(task, `no qat task ${job} for ${config}; have ${tasks.map((t) => t.name).join(', ')}`);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        sub.dispose();
        reject(new Error(`task ${job} did not end`));
      }, 180_000);
      const sub = vscode.tasks.onDidEndTaskProcess((e) => {
        if (e.execution.task.definition.job !== job || e.execution.task.definition.config !== config) return;
        clearTimeout(timer);
        sub.dispose();
        resolve(e.exitCode);
      });
      void vscode.tasks.executeTask(task);
    });
  }

  it('provides qat tasks for each config, and the info task runs through the kernel', async () => {
    const tasks = await vscode.tasks.fetchTasks({ type: 'qat' });
    const names = tasks.map((t) => `${t.definition.job}:${t.definition.config}`);
    for (const n of ['compare:digits.qat.yaml', 'info:digits.qat.yaml']) assert.ok(names.includes(n), names.join(', '));
    assert.equal(await runTask('info', 'digits.qat.yaml'), 0);
  });

  it('a task whose user code raises fails and reports a problem at the raising line', async () => {
    assert.equal(await runTask('compare', 'broken.qat.yaml'), 1);
    const file = vscode.Uri.joinPath(ws(), 'broken_model.py');
    const diags = await waitForDiagnostics(file, (d) => d.some((x) => x.source === 'qat'), 20_000);
    const hit = diags.find((x) => x.source === 'qat')!;
    assert.equal(hit.range.start.line, 1);
    assert.match(hit.message, /planted failure in make_model/);
  });

  it('the train task of a config with train.distributed trains under torchrun (2 processes) and checkpoints', async () => {
    const config = vscode.Uri.joinPath(ws(), 'ddp.qat.yaml');
    await vscode.workspace.openTextDocument(config);
    // The language server knows the key: no diagnostic on the config.
    await new Promise((r) => setTimeout(r, 1_500));
    assert.deepEqual(
      vscode.languages.getDiagnostics(config).map((d) => d.message),
      [],
    );
    assert.equal(await runTask('train', 'ddp.qat.yaml'), 0);
    const checkpoint = await vscode.workspace.fs.stat(vscode.Uri.joinPath(ws(), 'out', 'ddp.qat.pt'));
    assert.ok(checkpoint.size > 10_000);
  });

  it('QAT: Analyze Sensitivity ranks every quantized layer, and the evaluate task reuses the trained model', async () => {
    const config = vscode.Uri.joinPath(ws(), 'digits.qat.yaml');
    const result = await vscode.commands.executeCommand<{
      layers: Array<{ module: string; rank: number }>;
      suggestion: { overrides: unknown[] };
    }>('qatStudio.analyzeSensitivity', config, { budget: 1, apply: 'none' });
    assert.ok(result, 'no sensitivity result');
    assert.deepEqual(result.layers.map((l) => l.module).sort(), ['conv1', 'conv2', 'fc1', 'fc2']);
    assert.deepEqual(
      result.layers.map((l) => l.rank),
      [1, 2, 3, 4],
    );
    assert.ok(Array.isArray(result.suggestion.overrides));
    assert.equal(await runTask('evaluate', 'digits.qat.yaml'), 0);
    assert.equal(await runTask('convert', 'digits.qat.yaml'), 0);
    await vscode.workspace.fs.stat(vscode.Uri.joinPath(ws(), 'out', 'digits.int8.pt2'));
  });

  it('QAT: Search Mixed Precision plots the front and writes the picked point into the overrides, undoably', async () => {
    const config = vscode.Uri.joinPath(ws(), 'digits.qat.yaml');
    const doc = await vscode.workspace.openTextDocument(config);
    const before = doc.getText();
    try {
      await searchAndPick(config, doc, before);
    } finally {
      // The later tests read this config: never leave the picked point in it, even when an assertion failed.
      if (doc.getText() !== before) {
        await vscode.window.showTextDocument(doc);
        await vscode.commands.executeCommand('workbench.action.files.revert');
      }
    }
  });

  async function searchAndPick(config: vscode.Uri, doc: vscode.TextDocument, before: string): Promise<void> {
    type Candidate = { id: string; overrides: Array<{ match: string; precision: string }> };
    const out = await vscode.commands.executeCommand<{
      result: { candidates: Candidate[]; ends: { fp32: string }; front: string[] };
      panel: vscode.WebviewPanel;
      written?: boolean;
    }>('qatStudio.searchMixedPrecision', config, { budget: { candidates: 4 }, pick: 'fp32' });
    assert.ok(out?.written, 'the picked point was not written');
    const { result, panel } = out;
    assert.equal(result.candidates.length, 4);
    // The front page: a point per candidate in each of its two plots (the legend's marker names no candidate),
    // our script and style by nonce only.
    const html = panel.webview.html;
    assert.match(html, /content="default-src 'none'; style-src 'nonce-(\w+)'; script-src 'nonce-\1'"/);
    assert.equal((html.match(/<circle [^>]*data-id="/g) ?? []).length, 2 * result.candidates.length);
    assert.ok(!/https?:\/\//.test(html.replace(/http:\/\/www\.w3\.org\/2000\/svg/g, '')), 'the page names a URL');
    // All fp32: every layer gets an fp32 override (in the search's order), first under `overrides:`; the file on
    // disk is untouched.
    const fp32 = result.candidates.find((c) => c.id === result.ends.fp32)!;
    assert.deepEqual(fp32.overrides.map((o) => o.match).sort(), ['conv1', 'conv2', 'fc1', 'fc2']);
    assert.ok(fp32.overrides.every((o) => o.precision === 'fp32'));
    for (const o of fp32.overrides)
      assert.ok(doc.getText().includes(`- {match: '${o.match}', precision: fp32}`), o.match);
    assert.ok(doc.isDirty);
    assert.equal(new TextDecoder().decode(await vscode.workspace.fs.readFile(config)), before);
    await vscode.window.showTextDocument(doc);
    await vscode.commands.executeCommand('undo');
    assert.equal(doc.getText(), before);
    // Recorded in the Runs view.
    const api = vscode.extensions.getExtension(EXTENSION_ID)!.exports as {
      runs: { list(): Array<{ kind: string; status: string; config: string; figures: Array<[string, string]> }> };
    };
    const run = api.runs.list().find((r) => r.kind === 'search' && r.config === config.fsPath);
    assert.equal(run?.status, 'done');
    assert.match(run.figures.find(([k]) => k === 'front')?.[1] ?? '', /^\d+ points$/);
    panel.dispose();
  }

  it('QAT: Build for Target builds the INT8 model with TVM as a task and writes the build report', async () => {
    const config = vscode.Uri.joinPath(ws(), 'digits.qat.yaml');
    const exit = await vscode.commands.executeCommand<number>('qatStudio.buildForTarget', config, 'x86-64');
    assert.equal(exit, 0);
    const report = vscode.Uri.joinPath(ws(), 'out', 'tvm-x86-64', 'build-report.md');
    const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(report));
    // Rendered by the kernel (jobs/reports/tvm.py) in the one build/tvm request; the client only opens it.
    assert.match(text, /^# TVM build: x86-64/);
    assert.match(text, /Compute ops after the int8 fold: int8 [1-9]/);
    assert.match(text, /\| node_conv2d[^|]* \| conv\d \| Conv \| int8 \|/);
    // Every runtime timed in the same run, TVM INT8 among them, ratios against that run's PyTorch FP32.
    assert.match(text, /## Latency on this machine/);
    assert.match(text, /Every row timed in the same run, at the same batch sizes \(1, 16\)/);
    assert.match(text, /\| TVM INT8 \(int8 fold\) \| [0-9.]+ ms( \(noisy\))? \|/);
    assert.match(text, /\| ONNX Runtime INT8 \(QDQ\) \| [0-9.]+ ms( \(noisy\))? \|/);
    assert.match(text, /\| batch 1 median \| p10–p90 \| vs PyTorch FP32 \(eager\) \|/);
    assert.match(text, /\nTimed in 5 interleaved rounds .* threads: PyTorch \d+/);
    assert.match(text, /## Parity with PyTorch INT8 \(540 validation samples/);
    // Parity judged by thresholds the report states; float logits: top-1, absolute and relative difference,
    // accumulator steps only as a detail line.
    assert.match(text, /\*\*ok\*\* where top-1 agreement ≥ 99 %/);
    assert.match(text, /\| TVM INT8[^|]* \| ok \| 100\.0 % \| [0-9.e+-]+ \| [0-9.]+ % \| [0-9.]+ % \|/);
    assert.match(text, /\nDetail, in steps of the last layer's int32 accumulator \(.*\): .*TVM INT8.* [0-9]+/);
    assert.match(text, /## ONNX Runtime INT8 \(our QDQ export\): precision as executed\n\nCompute ops: int8 \d/);
    assert.match(text, /Fastest at batch 1: (\*\*.+\*\*|not decided)/);
    await vscode.workspace.fs.stat(vscode.Uri.joinPath(ws(), 'out', 'tvm-x86-64', 'model.so'));
  });

  it('the Runs view lists the compare and the build run, kept in out/qat-runs.json; two runs open in Compare Runs', async () => {
    const config = vscode.Uri.joinPath(ws(), 'digits.qat.yaml');
    const compared = await vscode.commands.executeCommand<{ layers: Array<{ module: string; cosine: number }> }>(
      'qatStudio.compareLayers',
      config,
    );
    assert.ok(compared, 'no compare result');
    type Run = { id: string; kind: string; status: string; config: string; figures: Array<[string, string]> };
    const api = vscode.extensions.getExtension(EXTENSION_ID)!.exports as {
      runs: { list(): Run[] };
      layersView: { getChildren(): Array<{ module: string }> };
      artifactsView: { getChildren(): Promise<Array<{ uri: vscode.Uri; kind: string }>> };
    };
    const runs = api.runs.list();
    const compare = runs.find((r) => r.kind === 'compare' && r.status === 'done' && r.config === config.fsPath);
    const build = runs.find((r) => r.kind === 'build' && r.status === 'done');
    assert.ok(compare, `no finished compare run in ${JSON.stringify(runs.map((r) => [r.kind, r.status]))}`);
    assert.ok(build, 'no finished build run');
    assert.ok(
      runs.some((r) => r.kind === 'compare' && r.status === 'failed' && r.config.endsWith('broken.qat.yaml')),
      'the failing compare task is not recorded as failed',
    );
    const figure = (r: Run, k: string) => r.figures.find(([l]) => l === k)?.[1];
    assert.match(figure(compare, 'INT8') ?? '', /^\d+\.\d\d %$/);
    assert.equal(figure(build, 'target'), 'x86-64');
    // On disk, so the history survives a reload.
    const onDisk = JSON.parse(
      Buffer.from(await vscode.workspace.fs.readFile(vscode.Uri.joinPath(ws(), 'out', 'qat-runs.json'))).toString(),
    ) as { runs: Run[] };
    for (const r of [compare, build])
      assert.ok(
        onDisk.runs.some((d) => d.id === r.id && d.status === 'done'),
        r.kind,
      );
    await vscode.commands.executeCommand('qatStudio.runs.focus');
    // Two runs selected in the view: the comparison shows their figures side by side.
    const panel = await vscode.commands.executeCommand<vscode.WebviewPanel>('qatStudio.compareRuns', compare, [
      compare,
      build,
    ]);
    assert.ok(panel, 'Compare Runs opened nothing');
    assert.equal(panel.title, 'Compare Runs');
    assert.match(
      panel.webview.html,
      /<th scope="col">compare · digits\.qat\.yaml<\/th><th scope="col">build x86-64 · digits\.qat\.yaml<\/th>/,
    );
    assert.match(panel.webview.html, /<th scope="row">INT8<\/th><td>\d+\.\d\d %<\/td><td><\/td>/);
    assert.ok(!panel.webview.html.includes('[object Object]'));
    panel.dispose();
    // Layers: the last comparison, worst first.
    assert.deepEqual(
      api.layersView.getChildren().map((l) => l.module),
      [...compared.layers].sort((a, b) => a.cosine - b.cosine).map((l) => l.module),
    );
    // Artifacts: the QDQ export, the INT8 program and the TVM library under out/.
    const kinds = (await api.artifactsView.getChildren()).map((a) => `${a.kind}:${a.uri.path.split('/out/')[1]}`);
    for (const k of ['onnx:digits.qdq.onnx', 'pt2:digits.int8.pt2']) assert.ok(kinds.includes(k), kinds.join(', '));
    assert.ok(
      kinds.some((k) => /^tvm:tvm-x86-64\//.test(k)),
      kinds.join(', '),
    );
  });

  it('QAT: Show Model Graph opens the INT8 graph in the graph view, and the config then checks override names', async () => {
    const config = vscode.Uri.joinPath(ws(), 'digits.qat.yaml');
    const result = await vscode.commands.executeCommand<{
      path: string;
      nodes: number;
      modules: Array<{ path: string }>;
    }>('qatStudio.showModelGraph', config, 'converted');
    assert.ok(result, 'no graph/export result');
    assert.equal(result.path, vscode.Uri.joinPath(ws(), 'out', 'digits.converted.qatgraph.json').fsPath);
    assert.ok(result.modules.some((m) => m.path === 'fc2'));
    const opened = vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .find(
        (t) =>
          t.input instanceof vscode.TabInputCustom &&
          t.input.viewType === 'qatStudio.onnxViewer' &&
          t.input.uri.fsPath === result.path,
      );
    assert.ok(opened, 'the graph file is not open in the graph view');
    // The view reports its layout back to the host with its boxes as a Float64Array (kept per file content for
    // the next open): VS Code must carry the typed array from the webview to the extension as one.
    const api = vscode.extensions.getExtension(EXTENSION_ID)!.exports as { layoutCache: { size: number } };
    for (const deadline = Date.now() + 60_000; api.layoutCache.size === 0;) {
      assert.ok(Date.now() < deadline, 'the graph view reported no layout the host could keep');
      await new Promise((r) => setTimeout(r, 200));
    }
    const doc = await vscode.workspace.openTextDocument(config);
    await vscode.window.showTextDocument(doc);
    const edit = new vscode.WorkspaceEdit();
    edit.insert(
      config,
      doc.positionAt(doc.getText().length),
      'overrides:\n  - {match: "fc2|conv9", precision: fp32}\n',
    );
    assert.ok(await vscode.workspace.applyEdit(edit));
    const diags = await waitForDiagnostics(config, (d) => d.some((x) => x.code === 'QCFG015'));
    assert.match(diags.find((x) => x.code === 'QCFG015')!.message, /"conv9" is not a module of the model/);
    await vscode.commands.executeCommand('workbench.action.files.revert');
  });

  it("QAT: Open Model Graphs Side by Side opens the model's graphs, then what ONNX Runtime and TVM run, in adjacent columns", async () => {
    const config = vscode.Uri.joinPath(ws(), 'digits.qat.yaml');
    const out = vscode.Uri.joinPath(ws(), 'out');
    const api = vscode.extensions.getExtension(EXTENSION_ID)!.exports as {
      layoutCache: { size: number; get(key: string): unknown[] };
    };
    const waitFor = async (what: string, ok: () => boolean, ms = 40_000) => {
      for (const deadline = Date.now() + ms; !ok();) {
        assert.ok(Date.now() < deadline, what);
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    // The ONNX Runtime pane comes from Show Model Graph; the TVM pane was written by Build for Target above.
    const before = api.layoutCache.size;
    const ort = await vscode.commands.executeCommand<{ path: string; stage: string; nodes: number }>(
      'qatStudio.showModelGraph',
      config,
      'ort',
    );
    assert.equal(ort?.path, vscode.Uri.joinPath(out, 'digits.ort.onnx').fsPath);
    assert.ok(ort.nodes > 0);
    await waitFor('the ONNX Runtime graph was never laid out in the graph view', () => api.layoutCache.size > before);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');

    const files = await vscode.commands.executeCommand<vscode.Uri[]>(
      'qatStudio.openGraphsSideBySide',
      vscode.Uri.joinPath(out, 'digits.converted.qatgraph.json'),
    );
    const names = files.map((f) => f.path.split('/').pop());
    assert.equal(names[0], 'digits.fp32.qatgraph.json', names.join(', '));
    assert.deepEqual(names.slice(-3), [
      'digits.converted.qatgraph.json',
      'digits.ort.onnx',
      'digits.tvm.qatgraph.json',
    ]);
    // Each in the graph view, in its own column, in that order.
    for (const [i, file] of files.entries()) {
      const group = vscode.window.tabGroups.all.find((g) => g.viewColumn === i + 1);
      const input = group?.activeTab?.input;
      assert.ok(
        input instanceof vscode.TabInputCustom &&
          input.viewType === 'qatStudio.onnxViewer' &&
          input.uri.fsPath === file.fsPath,
        `column ${i + 1} does not show ${names[i]}`,
      );
    }
    // The TVM pane's graph JSON passed the view's schema check and was drawn: its layout is kept under its bytes.
    const tvmBytes = fs.readFileSync(files.at(-1)!.fsPath);
    const key = createHash('sha1').update(tvmBytes).digest('hex');
    // Four views start at once: on a loaded machine the last one draws a while after the first.
    await waitFor(
      'the TVM kernels were never laid out in the graph view',
      () => api.layoutCache.get(key).length > 0,
      70_000,
    );
    const tvm = JSON.parse(tvmBytes.toString('utf8')) as { stage: string; nodes: Array<{ modules?: string[] }> };
    assert.equal(tvm.stage, 'tvm');
    // Whatever precision the config's overrides left each layer in, a kernel computes conv1 and names it.
    assert.ok(tvm.nodes.some((n) => n.modules?.includes('conv1')));
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('Keep This Layer in FP16 and Apply Fix edit only a QAT config inside the workspace, whatever path a view names', async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'qat-outside-'));
    const victim = path.join(outside, 'victim.qat.yaml');
    const text = 'version: 1\nflow: pt2e\n';
    fs.writeFileSync(victim, text);
    const link = path.join(ws().fsPath, 'linked.qat.yaml');
    fs.symlinkSync(victim, link);
    const notConfig = path.join(ws().fsPath, 'model.py');
    const pyBefore = fs.readFileSync(notConfig, 'utf8');
    try {
      // As a crafted graph JSON's `config` field would name them.
      for (const config of [victim, link, `${ws().fsPath}/../${path.basename(outside)}/victim.qat.yaml`, notConfig]) {
        const kept = await vscode.commands.executeCommand<boolean>('qatStudio.keepLayerFp16', {
          module: 'fc2',
          config,
        });
        assert.equal(kept, false, config);
        const fixed = await vscode.commands.executeCommand('qatStudio.applyFix', { module: 'fc2', config });
        assert.equal(fixed, undefined, config);
      }
      assert.equal(fs.readFileSync(victim, 'utf8'), text);
      assert.equal(fs.readFileSync(notConfig, 'utf8'), pyBefore);
      assert.ok(!vscode.workspace.textDocuments.some((d) => d.isDirty && d.uri.fsPath === victim), 'edited in memory');
    } finally {
      fs.rmSync(link, { force: true });
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  it('QAT: Create Kernel Environment makes a venv from a local wheel folder, points the kernel at it, and is undone', async () => {
    const { execFileSync } = await import('node:child_process');
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const path = await import('node:path');
    const work = mkdtempSync(path.join(tmpdir(), 'qat-ext-env-'));
    // A one-module wheel built here: nothing is downloaded.
    execFileSync('python3', [
      '-c',
      `import zipfile, sys
n = 'qatenvprobe-1.0'
f = {'qatenvprobe.py': 'ANSWER = 42\\n', n + '.dist-info/METADATA': 'Metadata-Version: 2.1\\nName: qatenvprobe\\nVersion: 1.0\\n',
  n + '.dist-info/WHEEL': 'Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n'}
f[n + '.dist-info/RECORD'] = ''.join(k + ',,\\n' for k in list(f) + [n + '.dist-info/RECORD'])
with zipfile.ZipFile(sys.argv[1] + '/qatenvprobe-1.0-py3-none-any.whl', 'w') as z:
    [z.writestr(k, v) for k, v in f.items()]`,
      work,
    ]);
    const requirements = path.join(work, 'requirements.txt');
    writeFileSync(requirements, 'qatenvprobe==1.0\n');
    const settings = () => vscode.workspace.getConfiguration('qatStudio');
    const before = settings().inspect<string>('pythonPath')?.workspaceValue;
    try {
      const python = await vscode.commands.executeCommand<string>('qatStudio.createKernelEnvironment', {
        dir: path.join(work, 'env'),
        requirements,
        pipArgs: ['--no-index', '--find-links', work],
      });
      assert.ok(python, 'no environment made');
      assert.equal(settings().get('pythonPath'), python);
      assert.equal(
        execFileSync(python, ['-c', 'import qatenvprobe; print(qatenvprobe.ANSWER)']).toString().trim(),
        '42',
      );
    } finally {
      await settings().update('pythonPath', before, vscode.ConfigurationTarget.Workspace);
      await vscode.commands.executeCommand('qatStudio.stopKernel');
    }
  });
});
