// Drives one language-server process over LSP with mutated QAT configs and edited Python scripts (seeded, so a
// failure can be replayed), and after each input a request (hover, completion, symbols, semantic tokens or
// code actions). Counts: inputs, crashes (server exit), hangs (no answer or no publish within its bound),
// errors the server logged, the slowest request, and the server's RSS at start and end.
import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { LspClient } from '../bench/lspClient';

export interface ReliabilityResult {
  inputs: number;
  crashes: number;
  hangs: number;
  errors: string[];
  maxLatencyMs: number;
  slowest: string;
  rssStartKb: number;
  rssEndKb: number;
  seconds: number;
}

export interface ReliabilityOptions {
  yaml: number;
  python: number;
  seed?: number;
  /** A request slower than this counts as a hang (the bound, not a speed goal). */
  requestMs?: number;
  /** A publish for an input later than this counts as a hang. */
  publishMs?: number;
}

const root = path.resolve(__dirname, '..', '..', '..');

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

const YAML_TOKENS = [
  '{',
  '}',
  '[',
  ']',
  ':',
  ': ',
  '- ',
  '"',
  "'",
  '&a ',
  '*a',
  '!!str ',
  '\t',
  '#',
  '|',
  '>',
  '? ',
  ',',
  '\n',
  '  ',
  'overrides:\n  - {match: "(a+)+$", precision: fp32}\n  - {match: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", precision: fp16}\n',
  'match: "(?P<x>a)(?P=x)"',
  'match: "layer(?=4)"',
  'match: "conv\\\\q"',
  'quant_min: -129',
  'dtype: qint32',
  'observer: MinMaxObserver',
  'qscheme: per_channel_symmetric',
  'eps: 0',
  'ch_axis: 7',
  'precision: fp16',
  'x'.repeat(5000),
  '9'.repeat(400),
  '\u0000',
  '\ud800',
  'é',
  'version: 2',
  'flow: pt2e',
  'backend: tvm',
];

const PY_SNIPPETS = [
  'self.relu(x)\n',
  'def f(self, x):\n    return self.conv1(x)\n',
  '(',
  ')',
  '"""',
  "'",
  '\n',
  '    ',
  'class ',
  'torch.ao.quantization.prepare_qat(model, inplace=True)\n',
  'model.train()\n',
  'model.eval()\n',
  'from torch.ao.quantization import fuse_modules\n',
  'fuse_modules(model, [["conv", "bn", "relu"]])\n',
  'torch.onnx.export(model, x, "m.onnx", opset_version=9)\n',
  'self.relu = nn.ReLU()\n',
  'lambda: ',
  '\\',
  'import tvm.relay\n',
  ':',
  '=',
  'x'.repeat(3000),
  '\t',
  '# qat: ignore\n',
  'self.',
  '@',
  'async ',
  'yield ',
];

function mutateText(text: string, r: () => number, tokens: string[]): string {
  const lines = text.split('\n');
  const pick = <T>(a: T[]) => a[Math.floor(r() * a.length)];
  const at = Math.floor(r() * (text.length + 1));
  switch (Math.floor(r() * 7)) {
    case 0:
      return text.slice(0, at) + pick(tokens) + text.slice(at);
    case 1:
      return text.slice(0, at) + text.slice(at + 1 + Math.floor(r() * 40));
    case 2: {
      const i = Math.floor(r() * lines.length);
      lines.splice(i, 0, lines[Math.floor(r() * lines.length)]);
      return lines.join('\n');
    }
    case 3: {
      lines.splice(Math.floor(r() * lines.length), 1);
      return lines.join('\n');
    }
    case 4: {
      const [i, j] = [Math.floor(r() * lines.length), Math.floor(r() * lines.length)];
      [lines[i], lines[j]] = [lines[j], lines[i]];
      return lines.join('\n');
    }
    case 5:
      return text.slice(0, at) + String.fromCharCode(Math.floor(r() * 128)) + text.slice(at + 1);
    default:
      return text.slice(0, at) + pick(tokens) + pick(tokens) + text.slice(at);
  }
}

async function rssKb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
}

function positionAt(text: string, offset: number): { line: number; character: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length - 1;
  return { line, character: offset - (before.lastIndexOf('\n') + 1) };
}

export async function runLanguageServerReliability(opts: ReliabilityOptions): Promise<ReliabilityResult> {
  const r = rng(opts.seed ?? 20261204);
  const requestMs = opts.requestMs ?? 1000;
  const publishMs = opts.publishMs ?? 10_000;
  const started = Date.now();
  const dir = path.join(root, 'examples', 'digits');
  const client = await LspClient.start(
    'qat-studio',
    [path.join(root, 'out', 'server', 'server.js'), '--stdio'],
    () => ({}),
    pathToFileURL(dir).href,
  );
  const result: ReliabilityResult = {
    inputs: 0,
    crashes: 0,
    hangs: 0,
    errors: [],
    maxLatencyMs: 0,
    slowest: '',
    rssStartKb: 0,
    rssEndKb: 0,
    seconds: 0,
  };
  const yamlSeeds = readdirSync(dir)
    .filter((f) => f.endsWith('.qat.yaml'))
    .map((f) => readFileSync(path.join(dir, f), 'utf8'));
  const corpusDir = path.join(root, 'test', 'corpus');
  const pySeeds = readdirSync(corpusDir)
    .filter((f) => f.endsWith('.py'))
    .map((f) => readFileSync(path.join(corpusDir, f), 'utf8'));

  const request = async (method: string, params: unknown) => {
    try {
      const { ms } = await client.request(method, params, requestMs);
      if (ms > result.maxLatencyMs) [result.maxLatencyMs, result.slowest] = [ms, method];
    } catch (err) {
      if (/exited/.test((err as Error).message)) throw err;
      result.hangs++;
      result.errors.push((err as Error).message);
    }
  };
  const probe = async (uri: string, text: string) => {
    const position = positionAt(text, Math.floor(r() * (text.length + 1)));
    const methods = ['textDocument/hover', 'textDocument/completion', 'textDocument/documentSymbol'];
    methods.push('textDocument/semanticTokens/full', 'textDocument/codeAction');
    const method = methods[Math.floor(r() * methods.length)];
    const range = { start: position, end: position };
    const context = { diagnostics: [] };
    await request(method, { textDocument: { uri }, position, range, context });
  };
  const published = async (uri: string, version: number) => {
    try {
      await client.waitFor(uri, (p) => p.version === version, `version ${version}`, publishMs);
    } catch (err) {
      if (/exited/.test((err as Error).message)) throw err;
      result.hangs++;
      result.errors.push((err as Error).message);
    }
  };

  try {
    const yamlUri = pathToFileURL(path.join(dir, 'fuzz.qat.yaml')).href;
    const pyUri = pathToFileURL(path.join(dir, 'fuzz_train.py')).href;
    await client.open(yamlUri, 'yaml', yamlSeeds[0]);
    await client.open(pyUri, 'python', pySeeds[0]);
    result.rssStartKb = await rssKb(client.pid);

    let version = 1;
    let text = yamlSeeds[0];
    for (let i = 0; i < opts.yaml; i++) {
      text = i % 20 === 0 ? yamlSeeds[i % yamlSeeds.length] : mutateText(text, r, YAML_TOKENS);
      if (text.length > 200_000) text = yamlSeeds[0];
      const done = published(yamlUri, ++version);
      await client.notify('textDocument/didChange', {
        textDocument: { uri: yamlUri, version },
        contentChanges: [{ text }],
      });
      await probe(yamlUri, text);
      await done;
      result.inputs++;
    }

    version = 1;
    text = pySeeds[0];
    for (let i = 0; i < opts.python; i++) {
      version++;
      let change: unknown;
      if (i % 200 === 199) {
        text = pySeeds[Math.floor(r() * pySeeds.length)];
        change = { text };
      } else {
        // An incremental edit, as an editor sends: insert a snippet or delete a span.
        const from = Math.floor(r() * (text.length + 1));
        const to = r() < 0.5 ? from : Math.min(text.length, from + 1 + Math.floor(r() * 60));
        const insert = to === from ? PY_SNIPPETS[Math.floor(r() * PY_SNIPPETS.length)] : '';
        change = { range: { start: positionAt(text, from), end: positionAt(text, to) }, text: insert };
        text = text.slice(0, from) + insert + text.slice(to);
      }
      const done = published(pyUri, version);
      await client.notify('textDocument/didChange', {
        textDocument: { uri: pyUri, version },
        contentChanges: [change],
      });
      await probe(pyUri, text);
      await done;
      result.inputs++;
    }
    result.rssEndKb = await rssKb(client.pid);
  } catch (err) {
    result.crashes++;
    result.errors.push((err as Error).message);
  } finally {
    result.errors.push(...client.logErrors);
    await client.stop();
    result.seconds = (Date.now() - started) / 1000;
  }
  return result;
}
