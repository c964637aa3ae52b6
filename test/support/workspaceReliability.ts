// A workspace someone else made, as input: planted special files (FIFOs, symlinks to /dev/zero, sockets, folders
// named like files), oversized configs and graphs, and out-of-range edits. Each language-server case runs in its
// own server process on its own folder; after it, a hover on a small canary config must be answered within
// CANARY_MS (a hang bound, not a speed goal) by a server that is still running, whose peak RSS stays under
// RSS_BOUND_MB. The extension host's workspace reads (run history, build reports) are driven directly: each must
// settle within the bound and leave unrelated reads unblocked. Nothing here depends on Workspace Trust: the
// language server and these reads run the same way in Restricted Mode.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { findExecutedOverlay } from '../../client/editors/executedOverlay';
import { RunStore } from '../../client/runs/runStore';
import { LspClient } from '../bench/lspClient';
import { repoRoot } from './paths';

export const CANARY_MS = 5000;
export const RSS_BOUND_MB = 1536;
/** How long a case's own action may take (a publish after a huge config, a big graph indexed). */
const ACTION_MS = 120_000;

export interface WorkspaceScale {
  /** Modules in the big exported graph (completion in `match:`). */
  graphModules: number;
  /** Bytes of the oversized config beside a script. */
  bigConfigBytes: number;
  /** Modules and misspelt overrides of the "did you mean" case. */
  misspeltModules: number;
  misspeltOverrides: number;
}

export const TEST_SCALE: WorkspaceScale = {
  graphModules: 300_000,
  bigConfigBytes: 5 << 20,
  misspeltModules: 200_000,
  misspeltOverrides: 200,
};
export const BENCH_SCALE: WorkspaceScale = {
  graphModules: 1_000_000,
  bigConfigBytes: 20 << 20,
  misspeltModules: 200_000,
  misspeltOverrides: 200,
};

export interface CaseOutcome {
  part: 'language server' | 'extension host';
  name: string;
  ok: boolean;
  /** The canary hover's latency (language server) or the case's own (extension host). */
  ms: number;
  peakRssMb?: number;
  detail: string;
}

const CANARY =
  'version: 1\nmodel: {entry: "model.py:make", example_input: [1, 3, 8, 8]}\nqconfig:\n  activation: {observer: MinMaxObserver, dtype: quint8}\n';
const SCRIPT =
  'import torch\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.conv1 = torch.nn.Conv2d(3, 8, 3)\n';
const NET =
  'version: 1\nmodel: {entry: "model.py:make", example_input: [1, 3, 8, 8]}\noverrides:\n  - {match: "conv1", precision: fp32}\n';

const uriOf = (file: string) => pathToFileURL(file).href;
const fifo = (file: string) => execFileSync('mkfifo', [file]);
const devZero = (file: string) => symlinkSync('/dev/zero', file);

function graphJson(config: string, modules: number, name: (i: number) => string): string {
  const parts: string[] = [];
  for (let i = 0; i < modules; i++) parts.push(`{"path":"${name(i)}","type":"Linear"}`);
  return `{"format":"qat-studio.graph/1","stage":"fp32","config":${JSON.stringify(config)},"nodes":[],"modules":[${parts.join(',')}]}`;
}

/** A position inside `needle` in `text` (its first occurrence, `into` characters in). */
function at(text: string, needle: string, into = 1) {
  const offset = text.indexOf(needle) + into;
  const line = text.slice(0, offset).split('\n').length - 1;
  return { line, character: offset - text.lastIndexOf('\n', offset - 1) - 1 };
}

interface LsCase {
  name: string;
  /** Plants the case's files; may resolve with what undoes them (a listening socket). */
  plant(dir: string, scale: WorkspaceScale): unknown;
  /** What the user does; resolves with a detail for the report, throws if the server got it wrong. */
  act(client: LspClient, dir: string, scale: WorkspaceScale): Promise<string>;
}

/** Hover on a module attribute in the script beside the planted config: its qconfig comes from `config`, or from
 * no config when the planted one must not be read. */
const hoverScript =
  (config: string | undefined) =>
  async (client: LspClient, dir: string): Promise<string> => {
    const uri = uriOf(path.join(dir, 'model.py'));
    await client.open(uri, 'python', SCRIPT);
    // A hover on another document sent meanwhile is answered while the script's waits for its config.
    const [{ result, ms }, meanwhile] = await Promise.all([
      client.request<{ contents: { value: string } } | null>('textDocument/hover', {
        textDocument: { uri },
        position: at(SCRIPT, 'conv1 =', 2),
      }),
      canaryHover(client, dir, 'canary-meanwhile.qat.yaml'),
    ]);
    const from = /\*\*QAT Studio\*\* · (\S+)/.exec(result?.contents.value ?? '')?.[1];
    if (from !== config) throw new Error(`the script's hover took its qconfig from ${from ?? 'no config'}`);
    return `script hover ${ms.toFixed(0)} ms, qconfig from ${from ?? 'no config'}; a hover meanwhile ${meanwhile.toFixed(0)} ms`;
  };

async function completeMatch(client: LspClient, dir: string): Promise<{ items: number; ms: number }> {
  const uri = uriOf(path.join(dir, 'net.qat.yaml'));
  const text = NET.replace('"conv1"', '"blocks.1"');
  await client.open(uri, 'yaml', text);
  const { result, ms } = await client.request<{ items: unknown[] } | null>(
    'textDocument/completion',
    { textDocument: { uri }, position: at(text, 'blocks.1', 8) },
    CANARY_MS,
  );
  return { items: result?.items.length ?? 0, ms };
}

const watched = (client: LspClient, file: string) =>
  client.notify('workspace/didChangeWatchedFiles', { changes: [{ uri: uriOf(file), type: 1 }] });

const LS_CASES: LsCase[] = [
  {
    name: 'config beside a script: a symlink to /dev/zero',
    plant: (dir) => devZero(path.join(dir, 'a.qat.yaml')),
    act: hoverScript(undefined),
  },
  {
    name: 'config beside a script: a FIFO',
    plant: (dir) => fifo(path.join(dir, 'a.qat.yaml')),
    act: hoverScript(undefined),
  },
  {
    name: 'config beside a script: a folder',
    plant: (dir) => mkdirSync(path.join(dir, 'a.qat.yaml')),
    act: hoverScript(undefined),
  },
  {
    name: 'config beside a script: over the size limit',
    plant: (dir, scale) =>
      writeFileSync(path.join(dir, 'a.qat.yaml'), NET + `# ${'x'.repeat(98)}\n`.repeat(scale.bigConfigBytes / 100)),
    act: hoverScript(undefined),
  },
  {
    name: 'config beside a script: 1.9 MB of overrides (under the limit, past the analysis budget)',
    plant: (dir) => {
      const lines = Array.from({ length: 40_000 }, (_, i) => `  - {match: "blocks\\\\.${i}\\\\.fc", precision: fp16}`);
      writeFileSync(path.join(dir, 'a.qat.yaml'), `${NET}${lines.join('\n')}\n`);
    },
    act: hoverScript('a.qat.yaml'),
  },
  {
    name: 'exported graph: a symlink to /dev/zero',
    plant: (dir) => devZero(path.join(dir, 'out', 'net.fp32.qatgraph.json')),
    act: async (client, dir) => `completion: ${(await completeMatch(client, dir)).items} items`,
  },
  {
    name: 'exported graph: a FIFO',
    plant: (dir) => fifo(path.join(dir, 'out', 'net.fp32.qatgraph.json')),
    act: async (client, dir) => `completion: ${(await completeMatch(client, dir)).items} items`,
  },
  {
    name: 'exported graph: a socket',
    plant: async (dir) => {
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(path.join(dir, 'out', 'net.fp32.qatgraph.json'), resolve));
      return () => server.close();
    },
    act: async (client, dir) => `completion: ${(await completeMatch(client, dir)).items} items`,
  },
  {
    name: 'watched graph files: a symlink to /dev/zero and a FIFO',
    plant: (dir) => {
      devZero(path.join(dir, 'zero.qatgraph.json'));
      fifo(path.join(dir, 'fifo.qatgraph.json'));
    },
    act: async (client, dir) => {
      await watched(client, path.join(dir, 'zero.qatgraph.json'));
      await watched(client, path.join(dir, 'fifo.qatgraph.json'));
      return 'two watched-file events';
    },
  },
  {
    name: 'exported graph with many modules: completion in match:',
    plant: (dir, scale) =>
      writeFileSync(
        path.join(dir, 'out', 'net.fp32.qatgraph.json'),
        graphJson(path.join(dir, 'net.qat.yaml'), scale.graphModules, (i) => `blocks.${i}.mlp.fc`),
      ),
    act: async (client, dir, scale) => {
      // The graph is indexed off the request path: completion answers at once, with module names once it is in.
      const deadline = performance.now() + ACTION_MS;
      let last = { items: 0, ms: 0 };
      let slowest = 0;
      while (performance.now() < deadline) {
        last = await completeMatch(client, dir);
        slowest = Math.max(slowest, last.ms);
        if (last.items > 0) break;
        await client.close(uriOf(path.join(dir, 'net.qat.yaml')));
        await new Promise((r) => setTimeout(r, 250));
      }
      if (last.items === 0 || last.items > 1000) throw new Error(`completion gave ${last.items} items`);
      return `${scale.graphModules} modules: ${last.items} items, slowest completion ${slowest.toFixed(0)} ms`;
    },
  },
  {
    name: 'misspelt overrides against many modules ("did you mean")',
    plant: (dir, scale) => {
      writeFileSync(
        path.join(dir, 'out', 'net.fp32.qatgraph.json'),
        graphJson(path.join(dir, 'net.qat.yaml'), scale.misspeltModules, (i) => `layers.${i}.mlp.fc${i % 3}`),
      );
    },
    act: async (client, dir, scale) => {
      const lines = Array.from(
        { length: scale.misspeltOverrides },
        (_, i) => `  - {match: "layrs.${i}.mlp.fc9", precision: fp32}`,
      );
      const text = `version: 1\nmodel: {entry: "model.py:make", example_input: [1, 3, 8, 8]}\noverrides:\n${lines.join('\n')}\n`;
      const uri = uriOf(path.join(dir, 'net.qat.yaml'));
      const published = client.waitFor(
        uri,
        (p) => p.diagnostics.some((d) => d.code === 'QCFG015'),
        'QCFG015',
        ACTION_MS,
      );
      const start = performance.now();
      await client.notify('textDocument/didOpen', { textDocument: { uri, languageId: 'yaml', version: 1, text } });
      const canary = await canaryHover(client, dir, 'canary-during.qat.yaml');
      const p = await published;
      const n = p.diagnostics.filter((d) => d.code === 'QCFG015').length;
      return `${scale.misspeltOverrides} overrides × ${scale.misspeltModules} modules: ${n} QCFG015 in ${(p.at - start).toFixed(0)} ms, a hover meanwhile ${canary.toFixed(0)} ms`;
    },
  },
  {
    name: 'an edit whose range starts past the end (line 1e9), then another',
    plant: () => undefined,
    act: async (client, dir) => {
      const uri = uriOf(path.join(dir, 'net.qat.yaml'));
      await client.open(uri, 'yaml', NET);
      await client.notify('textDocument/didChange', {
        textDocument: { uri, version: 2 },
        contentChanges: [
          { range: { start: { line: 1e9, character: 0 }, end: { line: 1e9, character: 0 } }, text: '#' },
        ],
      });
      const { ms } = await client.change(uri, 3, 0, 0, 0, '# a comment\n', () => true);
      return `publish after the second edit in ${ms.toFixed(0)} ms`;
    },
  },
];

async function canaryHover(client: LspClient, dir: string, name = 'canary.qat.yaml'): Promise<number> {
  // In a folder of its own: a config beside the case's script would change what the case tests.
  const file = path.join(dir, 'canary', name);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, CANARY);
  const uri = uriOf(file);
  await client.notify('textDocument/didOpen', { textDocument: { uri, languageId: 'yaml', version: 1, text: CANARY } });
  const { result, ms } = await client.request<{ contents: unknown } | null>(
    'textDocument/hover',
    { textDocument: { uri }, position: at(CANARY, 'MinMaxObserver', 3) },
    CANARY_MS,
  );
  if (!result) throw new Error('the canary hover came back empty');
  return ms;
}

function peakRssMb(pid: number): number | undefined {
  try {
    const kb = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

async function runLsCase(c: LsCase, scale: WorkspaceScale): Promise<CaseOutcome> {
  const dir = mkdtempSync(path.join(tmpdir(), 'qat-ws-'));
  mkdirSync(path.join(dir, 'out'));
  writeFileSync(path.join(dir, 'model.py'), SCRIPT);
  const outcome: CaseOutcome = { part: 'language server', name: c.name, ok: false, ms: NaN, detail: '' };
  let client: LspClient | undefined;
  let cleanup: (() => void) | undefined;
  try {
    const planted: unknown = await c.plant(dir, scale);
    if (typeof planted === 'function') cleanup = planted as () => void;
    client = await LspClient.start(
      'qat-studio',
      [path.join(repoRoot, 'out', 'server', 'server.js'), '--stdio'],
      () => ({}),
      uriOf(dir),
    );
    const detail = await c.act(client, dir, scale);
    outcome.ms = await canaryHover(client, dir);
    outcome.peakRssMb = peakRssMb(client.pid);
    outcome.ok = (outcome.peakRssMb ?? 0) < RSS_BOUND_MB;
    outcome.detail = outcome.ok ? detail : `${detail}; peak RSS ${outcome.peakRssMb?.toFixed(0)} MB`;
  } catch (err) {
    outcome.detail = (err as Error).message.slice(0, 500);
  } finally {
    await client?.stop();
    cleanup?.();
    rmSync(dir, { recursive: true, force: true });
  }
  return outcome;
}

/** A promise that must settle within the bound; resolves with how long it took. */
async function bounded(what: Promise<unknown>, label: string): Promise<number> {
  const start = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${label}: not settled within ${CANARY_MS} ms`)), CANARY_MS);
  });
  try {
    await Promise.race([what, late]);
  } finally {
    clearTimeout(timer);
  }
  return performance.now() - start;
}

interface HostCase {
  name: string;
  run(dir: string): Promise<string>;
}

const HOST_CASES: HostCase[] = [
  {
    name: 'run history (out/qat-runs.json): a FIFO, then a symlink to /dev/zero',
    run: async (dir) => {
      const file = path.join(dir, 'out', 'qat-runs.json');
      fifo(file);
      const store = RunStore.forWorkspace(dir);
      await bounded(store.load(), 'loading a FIFO history');
      rmSync(file);
      devZero(file);
      await bounded(store.load(), 'loading /dev/zero');
      if (store.list().length) throw new Error('runs came out of a special file');
      return 'empty history both times';
    },
  },
  {
    name: 'run history with records missing their fields',
    run: async (dir) => {
      const good = {
        id: 'a',
        kind: 'compare',
        config: 'a.qat.yaml',
        started: '2026-01-01T00:00:00Z',
        status: 'done',
        figures: [],
      };
      writeFileSync(
        path.join(dir, 'out', 'qat-runs.json'),
        JSON.stringify({
          version: 1,
          runs: [good, { id: 'b', status: 'done' }, null, 'x', { ...good, id: 'c', started: 7 }],
        }),
      );
      const store = RunStore.forWorkspace(dir);
      await bounded(store.load(), 'loading');
      const ids = store.list().map((r) => r.id);
      if (ids.join() !== 'a') throw new Error(`kept ${ids.join()}`);
      return 'the well-formed record kept, 4 dropped';
    },
  },
  {
    name: 'build reports beside an export: four FIFOs (beside it and in three runtime folders)',
    run: async (dir) => {
      const out = path.join(dir, 'out');
      const model = path.join(out, 'net.qdq.onnx');
      writeFileSync(model, 'not read here');
      fifo(path.join(out, 'build-report.json'));
      for (const sub of ['ort-cpu', 'tvm-x86-64', 'tvm-c']) {
        mkdirSync(path.join(out, sub));
        fifo(path.join(out, sub, 'build-report.json'));
      }
      const found = findExecutedOverlay(model);
      // The reads must not hold libuv's thread pool: an unrelated read meanwhile settles too.
      await bounded(readFile(path.join(dir, 'model.py')), 'an unrelated read during the report search');
      await bounded(found, 'the report search');
      if (await found) throw new Error('an overlay came out of a FIFO');
      return 'no overlay; an unrelated read was not held up';
    },
  },
];

async function runHostCase(c: HostCase): Promise<CaseOutcome> {
  const dir = mkdtempSync(path.join(tmpdir(), 'qat-ws-'));
  mkdirSync(path.join(dir, 'out'));
  writeFileSync(path.join(dir, 'model.py'), SCRIPT);
  const start = performance.now();
  const outcome: CaseOutcome = { part: 'extension host', name: c.name, ok: false, ms: NaN, detail: '' };
  try {
    outcome.detail = await c.run(dir);
    outcome.ok = true;
  } catch (err) {
    outcome.detail = (err as Error).message.slice(0, 500);
  } finally {
    outcome.ms = performance.now() - start;
    rmSync(dir, { recursive: true, force: true });
  }
  return outcome;
}

export async function runWorkspaceReliability(scale: WorkspaceScale): Promise<CaseOutcome[]> {
  const outcomes: CaseOutcome[] = [];
  for (const c of HOST_CASES) outcomes.push(await runHostCase(c));
  for (const c of LS_CASES) outcomes.push(await runLsCase(c, scale));
  return outcomes;
}

export const WORKSPACE_CASES = HOST_CASES.length + LS_CASES.length;

export function describeOutcome(o: CaseOutcome): string {
  const rss = o.peakRssMb === undefined ? '' : `, peak RSS ${o.peakRssMb.toFixed(0)} MB`;
  return `${o.ok ? 'ok  ' : 'FAIL'} ${o.part}: ${o.name}: ${o.ms.toFixed(0)} ms${rss}; ${o.detail}`;
}
