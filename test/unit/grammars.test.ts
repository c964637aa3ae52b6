// The TextMate injection grammars in syntaxes/: every pattern compiles, scopes are ones ordinary themes colour,
// package.json contributes each grammar, and snapshots of real tokenization (vscode-textmate + Oniguruma, the
// engine VS Code runs, with VS Code's own YAML and Python grammars underneath ours).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { repoRoot } from './helpers/builder';
import { tokenize } from '../support/textmate';

const OURS = /qat-studio/;

interface Rule {
  match?: string;
  name?: string;
  include?: string;
  captures?: Record<string, { name: string }>;
}
interface Grammar {
  scopeName: string;
  injectionSelector: string;
  patterns: Rule[];
  repository: Record<string, Rule>;
}

const load = (file: string) => JSON.parse(readFileSync(path.join(repoRoot, 'syntaxes', file), 'utf8')) as Grammar;
const grammars = {
  yaml: load('qat-yaml.injection.tmLanguage.json'),
  python: load('qat-python.injection.tmLanguage.json'),
};
const THEME_SCOPES =
  /^(support\.function|support\.type|constant\.language|entity\.name\.tag\.yaml|punctuation\.separator\.key-value\.mapping\.yaml)(\.|$)/;

const rules = (g: Grammar) => g.patterns.map((p) => (p.include ? g.repository[p.include.slice(1)] : p));

test('every pattern compiles and uses ordinary theme scopes', () => {
  for (const g of Object.values(grammars)) {
    for (const r of rules(g)) {
      assert.ok(r.match, `${g.scopeName}: every rule is a match rule`);
      assert.doesNotThrow(() => new RegExp(r.match!), r.match);
      for (const scope of [r.name, ...Object.values(r.captures ?? {}).map((c) => c.name)].filter(Boolean) as string[]) {
        assert.match(scope, THEME_SCOPES);
      }
    }
  }
});

test('package.json contributes both grammars, injected into their languages', () => {
  const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
  const contributed = pkg.contributes.grammars as Array<{ scopeName: string; path: string; injectTo: string[] }>;
  for (const g of Object.values(grammars)) {
    const entry = contributed.find((c) => c.scopeName === g.scopeName);
    assert.ok(entry, g.scopeName);
    assert.equal(load(path.basename(entry.path)).scopeName, g.scopeName);
    const base = /^L:(source\.\w+)/.exec(g.injectionSelector)![1];
    assert.deepEqual(entry.injectTo, [base]);
  }
});

test("YAML snapshot under VS Code's own YAML grammar: observers, dtypes, qschemes, backends, precision, flow", async () => {
  const text = [
    'qconfig:',
    '  activation: {observer: MovingAverageMinMaxObserver, dtype: quint8, qscheme: per_tensor_affine}',
    '  weight:',
    '    observer: PerChannelMinMaxObserver',
    '    dtype: qint8',
    'backend: x86',
    'flow: pt2e',
    'overrides:',
    '  - {match: "fc", precision: fp16}',
    'name: x86_64 # MinMaxObserverX',
  ].join('\n');
  assert.deepEqual(await tokenize('source.yaml', text, OURS), [
    ['MovingAverageMinMaxObserver', 'support.type.observer.qat-studio'],
    ['quint8', 'support.type.dtype.qat-studio'],
    ['per_tensor_affine', 'constant.language.qscheme.qat-studio'],
    ['PerChannelMinMaxObserver', 'support.type.observer.qat-studio'],
    ['qint8', 'support.type.dtype.qat-studio'],
    ['x86', 'constant.language.backend.qat-studio'],
    ['pt2e', 'constant.language.flow.qat-studio'],
    ['fp16', 'constant.language.precision.qat-studio'],
  ]);
  // Keys keep the base grammar's scopes.
  assert.deepEqual(
    (await tokenize('source.yaml', '    dtype: qint8'))
      .filter(([t]) => t.trim())
      .map(([t, s]) => [t, s.replace(/\.yaml$/, '')]),
    [
      ['dtype', 'entity.name.tag'],
      [':', 'punctuation.separator.key-value.mapping'],
      ['qint8', 'support.type.dtype.qat-studio'],
    ],
  );
});

test("Python snapshot under VS Code's own Python grammar: QAT calls, classes and torch constants, not in strings or comments", async () => {
  const text = [
    'm = tq.prepare_qat(m); q = convert_pt2e(p)',
    'fq = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, dtype=torch.qint8, qscheme=torch.per_channel_symmetric)',
    'model.qconfig = QConfig(activation=a, weight=w)',
    'prepare_qat_result = my_prepare_qat + prepare_qat',
    's = "prepare_qat"  # convert_pt2e',
  ].join('\n');
  assert.deepEqual(await tokenize('source.python', text, OURS), [
    ['prepare_qat', 'support.function.qat-studio'],
    ['convert_pt2e', 'support.function.qat-studio'],
    ['FakeQuantize', 'support.type.qat-studio'],
    ['MovingAverageMinMaxObserver', 'support.type.qat-studio'],
    ['qint8', 'constant.language.qat-studio'],
    ['per_channel_symmetric', 'constant.language.qat-studio'],
    ['QConfig', 'support.type.qat-studio'],
  ]);
});
