// Thousands of random edits and truncations of real configs and scripts: every service must return
// (never throw) within a bounded time, and applying its quick fixes must not break it either.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { codeActionsFor } from '../../server/services/codeActions';
import { diagnosticsFor } from '../../server/services/diagnostics';
import { yamlCompletion } from '../../server/services/yamlCompletion';
import { yamlHover } from '../../server/services/yamlHover';
import { yamlSymbols } from '../../server/services/yamlSymbols';
import { config, repoRoot } from './helpers/builder';

/** mulberry32: small, seeded, the same sequence on every machine. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SNIPPETS = [
  '{',
  '}',
  '[',
  ']',
  ':',
  ': ',
  ',',
  '-',
  '- ',
  '#',
  '"',
  "'",
  '\n',
  '\n  ',
  '    ',
  '\t',
  '\\',
  '&a',
  '*a',
  '!!str ',
  'observer: ',
  'quant_max: 99999',
  'qscheme: per_channel_affine',
  'match: "("',
  'dtype: float16',
  'reduce_range: true',
  '65504',
  'def ',
  'class X(nn.Module):\n',
  'self.relu(',
  'prepare_qat(',
  'model.eval()\n',
  'torch.quantization.',
  'relay.build(',
  '(',
  ')',
  'torch.save(q',
  '"""',
  'lambda: ',
  '\u00e9',
  '\u{1F600}',
  '\r\n',
];

const sources: Array<{ name: string; text: string; lang: 'yaml' | 'python' }> = [
  ...readdirSync(path.join(repoRoot, 'examples', 'digits'))
    .filter((f) => /\.(ya?ml|py)$/.test(f))
    .map((f) => ({
      name: f,
      text: readFileSync(path.join(repoRoot, 'examples', 'digits', f), 'utf8'),
      lang: f.endsWith('.py') ? ('python' as const) : ('yaml' as const),
    })),
  ...readdirSync(path.join(repoRoot, 'test', 'unit', 'fixtures-python')).map((f) => ({
    name: f,
    text: readFileSync(path.join(repoRoot, 'test', 'unit', 'fixtures-python', f), 'utf8'),
    lang: 'python' as const,
  })),
  {
    name: 'overrides.qat.yaml',
    lang: 'yaml',
    text: config({
      flow: 'eager',
      backend: 'fbgemm',
      activation: 'observer: FakeQuantize, quant_min: -65504, dtype: float16',
      weight: 'observer: MinMaxObserver, qscheme: per_channel_symmetric, ch_axis: 0',
      overrides: ['match: "conv1|fc", precision: fp16', 'match: "fc", weight: {eps: 0}'],
    }),
  },
];

function mutate(text: string, rand: () => number): string {
  const at = Math.floor(rand() * (text.length + 1));
  const r = rand();
  if (r < 0.15) return text.slice(0, at); // truncation
  if (r < 0.45) return text.slice(0, at) + text.slice(Math.min(text.length, at + 1 + Math.floor(rand() * 20)));
  if (r < 0.55) {
    // duplicate a slice elsewhere
    const from = Math.floor(rand() * text.length);
    return text.slice(0, at) + text.slice(from, from + Math.floor(rand() * 40)) + text.slice(at);
  }
  return text.slice(0, at) + SNIPPETS[Math.floor(rand() * SNIPPETS.length)] + text.slice(at);
}

const ITERATIONS = 3000;

// Speed is not asserted here (a loaded machine makes any bound flaky): `npm run bench` measures it.
test(`${ITERATIONS} random edits: services never throw`, () => {
  const rand = prng(20261202);
  let worst = 0;
  let actions = 0;
  for (let i = 0; i < ITERATIONS; i++) {
    const source = sources[i % sources.length];
    let text = source.text;
    for (let n = 1 + Math.floor(rand() * 6); n > 0; n--) text = mutate(text, rand);
    const uri = `file:///fuzz/${i}.${source.lang === 'yaml' ? 'qat.yaml' : 'py'}`;
    const doc = TextDocument.create(uri, source.lang, 1, text);
    const pos = doc.positionAt(Math.floor(rand() * (text.length + 1)));
    const started = performance.now();
    try {
      diagnosticsFor(doc);
      const found = codeActionsFor(doc, { start: { line: 0, character: 0 }, end: doc.positionAt(text.length) });
      actions += found.length;
      const first = found[0]?.edit?.changes?.[uri];
      if (first) diagnosticsFor(TextDocument.create(uri, source.lang, 2, TextDocument.applyEdits(doc, first)));
      if (source.lang === 'yaml') {
        yamlCompletion(doc, pos);
        yamlHover(doc, pos);
        yamlSymbols(doc);
      }
    } catch (err) {
      assert.fail(`iteration ${i} (${source.name}) threw ${(err as Error).stack}\n--- document ---\n${text}`);
    }
    worst = Math.max(worst, performance.now() - started);
  }
  console.log(`slowest document: ${worst.toFixed(1)} ms (not asserted)`);
  assert.ok(actions > 0, 'the mutations produced findings with fixes');
});
