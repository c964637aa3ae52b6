// Huge documents over LSP against the real server: analysis is budgeted and sliced, so hover is answered while
// a 5 MB Python file or a 5 MB config is analysed, and each of them and a 5,000-override config get diagnostics
// that say where analysis stopped.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { after, before, test } from 'node:test';
import { LspClient, type Published } from '../bench/lspClient';

const root = path.resolve(__dirname, '..', '..', '..');
const dir = mkdtempSync(path.join(tmpdir(), 'qat-big-'));
const uri = (name: string) => pathToFileURL(path.join(dir, name)).href;
let client: LspClient;

const small = 'version: 1\nmodel: {entry: "model.py:make_model", example_input: [2, 1, 8, 8]}\nqconfig: {}\n';

function bigPython(size: number): string {
  // Scripts with findings (fuse in train mode, TVM Relay), repeated with renamed classes.
  const corpus = ['17_fuse_model_in_train_mode.py', '10_tvm_relay_legacy.py']
    .map((f) => readFileSync(path.join(root, 'test', 'corpus', f), 'utf8'))
    .join('\n');
  const parts: string[] = [];
  let n = 0;
  for (let i = 0; n < size; i++) {
    const part = corpus.replace(/class (\w+)/g, (_, c: string) => `class ${c}${i}`) + '\n';
    parts.push(part);
    n += part.length;
  }
  return parts.join('');
}

/** A block-style config of about `size` characters; every 500th override names a misspelt observer. */
function bigConfig(size: number): string {
  const parts = [small, 'overrides:\n'];
  let n = 0;
  for (let i = 0; n < size; i++) {
    const observer = i % 500 === 7 ? 'MovingAverageMinMaxObservr' : 'MovingAverageMinMaxObserver';
    const part =
      `  - match: "layer${i}\\\\.conv[0-9]+"\n    precision: int8\n` +
      `    activation:\n      observer: ${observer}\n      dtype: quint8\n`;
    parts.push(part);
    n += part.length;
  }
  return parts.join('');
}

before(async () => {
  client = await LspClient.start(
    'qat-studio',
    [path.join(root, 'out', 'server', 'server.js'), '--stdio'],
    () => ({}),
    pathToFileURL(dir).href,
  );
  await client.open(uri('small.qat.yaml'), 'yaml', small);
});

after(async () => {
  await client?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const hoverSmall = () =>
  client.request('textDocument/hover', {
    textDocument: { uri: uri('small.qat.yaml') },
    position: { line: 0, character: 2 },
  });

/**
 * Sends hovers one after another until `done` settles; how many were answered before it. Called after a hover
 * answered once the open was read (requests are handled in order) and a pause past the debounce, every hover
 * it counts was answered while the server was analysing.
 */
async function hoversUntil(done: Promise<Published>, what?: string): Promise<number> {
  let finished = false;
  void done.then(() => (finished = true));
  let answered = 0;
  let slowest = 0;
  const started = performance.now();
  while (!finished) {
    const t0 = performance.now();
    await hoverSmall();
    if (!finished) answered++;
    slowest = Math.max(slowest, performance.now() - t0);
  }
  if (what)
    console.log(
      `${what}: diagnostics after ${((performance.now() - started) / 1000).toFixed(1)} s, ${answered} hovers ` +
        `answered meanwhile, the slowest in ${slowest.toFixed(0)} ms`,
    );
  return answered;
}

test('a 5 MB Python file: hovers are answered while it is analysed, then partial results with the stop line', async () => {
  const text = bigPython(5_000_000);
  const published = client.waitFor(uri('big.py'), () => true, 'big Python file');
  await client.notify('textDocument/didOpen', {
    textDocument: { uri: uri('big.py'), languageId: 'python', version: 1, text },
  });
  // The first hover may come before the analysis starts; the next ones are sent only after an answer, so
  // any beyond one were answered while the server was analysing.
  const answered = await hoversUntil(published, '5 MB Python file');
  const { diagnostics } = await published;
  assert.ok(answered >= 2, `only ${answered} hover(s) answered before the analysis finished`);
  const size = diagnostics.filter((d) => d.code === 'SIZE');
  assert.equal(size.length, 1);
  assert.match(size[0].message, /^Analysis stopped at line \d+ because of the document's size/);
  const line = Number(/line (\d+)/.exec(size[0].message)![1]);
  assert.equal(size[0].range.start.line, line - 1);
  assert.ok(
    diagnostics.some((d) => d.code !== 'SIZE'),
    'findings before the stop line are published',
  );
  assert.ok(
    diagnostics.every((d) => d.range.start.line < line),
    'nothing past the stop line',
  );
});

test('a config with 5,000 overrides: hovers are answered meanwhile, the override checks stop at override 1000', async () => {
  const items = Array.from(
    { length: 5000 },
    (_, i) => `  - {match: "layer${i}\\\\.conv[0-9]+|fc${i}", precision: fp16}`,
  );
  const text = `${small}overrides:\n${items.join('\n')}\n`;
  const published = client.waitFor(uri('many.qat.yaml'), () => true, 'big config');
  await client.notify('textDocument/didOpen', {
    textDocument: { uri: uri('many.qat.yaml'), languageId: 'yaml', version: 1, text },
  });
  await hoverSmall();
  await new Promise((resolve) => setTimeout(resolve, 50));
  const answered = await hoversUntil(published, '5,000-override config');
  const { diagnostics } = await published;
  assert.ok(answered >= 2, `only ${answered} hover(s) answered while the config was analysed`);
  const size = diagnostics.filter((d) => d.code === 'SIZE');
  assert.equal(size.length, 1);
  assert.match(size[0].message, /line 1004 .*5000 overrides; the override checks take the first 1000/);
  const hover = await client.request<{ contents: unknown } | null>('textDocument/hover', {
    textDocument: { uri: uri('many.qat.yaml') },
    position: { line: 3, character: 2 },
  });
  assert.ok(hover.result, 'hover on the big config');
});

test('a 5 MB config: hovers are answered while it is analysed, then partial results with the stop line', async () => {
  const text = bigConfig(5_000_000);
  const big = uri('big.qat.yaml');
  const published = client.waitFor(big, () => true, 'big config');
  await client.notify('textDocument/didOpen', {
    textDocument: { uri: big, languageId: 'yaml', version: 1, text },
  });
  await hoverSmall();
  await new Promise((resolve) => setTimeout(resolve, 50));
  const answered = await hoversUntil(published, '5 MB config');
  const { diagnostics } = await published;
  assert.ok(answered >= 2, `only ${answered} hover(s) answered while the config was analysed`);
  // One for the document, one for the override checks (they stop at override 1000).
  const size = diagnostics.filter((d) => d.code === 'SIZE' && / KB is checked/.test(d.message));
  assert.equal(size.length, 1);
  assert.equal(diagnostics.filter((d) => d.code === 'SIZE').length, 2);
  assert.match(
    size[0].message,
    /^Analysis stopped at line \d+ because of the document's size \(\d+ KB; the first 512 KB is checked\)/,
  );
  const line = Number(/line (\d+)/.exec(size[0].message)![1]);
  assert.equal(size[0].range.start.line, line - 1);
  const typos = diagnostics.filter((d) => d.code === 'QCFG009');
  assert.ok(typos.length > 0, 'findings before the stop line are published');
  assert.ok(
    diagnostics.every((d) => d.range.start.line < line),
    'nothing past the stop line',
  );
  assert.ok(!diagnostics.some((d) => d.code === 'YAML'), 'the analysed part is whole YAML nodes');
  const hover = (l: number) =>
    client.request<{ contents: unknown } | null>('textDocument/hover', {
      textDocument: { uri: big },
      position: { line: l, character: 8 },
    });
  assert.ok((await hover(5)).result, 'hover before the stop line');
  assert.equal((await hover(line + 10)).result, null, 'no hover past it');
  const completion = await client.request<{ items: unknown[] }>('textDocument/completion', {
    textDocument: { uri: big },
    position: { line: 7, character: 6 },
  });
  assert.ok(completion.result.items.length > 0, 'completion in the big config');
});

/** Opens `text` as version 1, sends versions 2 and 3 at once, and returns what was published: only version 3's. */
async function publishedAfterTwoQuickEdits(name: string, languageId: string, text: string) {
  const target = uri(name);
  const seen: Array<number | undefined> = [];
  const last = client.waitFor(
    target,
    (p) => {
      seen.push(p.version);
      return p.version === 3;
    },
    'version 3',
  );
  await client.notify('textDocument/didOpen', { textDocument: { uri: target, languageId, version: 1, text } });
  for (const version of [2, 3])
    await client.notify('textDocument/didChange', {
      textDocument: { uri: target, version },
      contentChanges: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: '#\n' }],
    });
  const { diagnostics } = await last;
  return { seen, diagnostics };
}

test('an edit while a big config is analysed drops the stale analysis: only the newest version is published', async () => {
  const { seen, diagnostics } = await publishedAfterTwoQuickEdits('edited.qat.yaml', 'yaml', bigConfig(400_000));
  assert.deepEqual(seen, [3]);
  assert.ok(diagnostics.some((d) => d.code === 'QCFG009'));
});

test('an edit while a big file is analysed drops the stale analysis: only the newest version is published', async () => {
  const { seen } = await publishedAfterTwoQuickEdits('edited.py', 'python', bigPython(1_000_000));
  assert.deepEqual(seen, [3]);
});
