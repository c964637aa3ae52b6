// The TextMate injection grammars in syntaxes/. vscode-textmate + vscode-oniguruma are not installed, so
// this does not run the real engine: it checks that every pattern compiles as a JS RegExp (our patterns
// stay in the syntax both engines share), that scopes are ones ordinary themes colour, that package.json
// contributes each grammar, and snapshots what the patterns alone would scope on sample lines.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { repoRoot } from './helpers/builder';

interface Rule { match?: string; name?: string; include?: string; captures?: Record<string, { name: string }> }
interface Grammar { scopeName: string; injectionSelector: string; patterns: Rule[]; repository: Record<string, Rule> }

const load = (file: string) => JSON.parse(readFileSync(path.join(repoRoot, 'syntaxes', file), 'utf8')) as Grammar;
const grammars = { yaml: load('qat-yaml.injection.tmLanguage.json'), python: load('qat-python.injection.tmLanguage.json') };
const THEME_SCOPES = /^(support\.function|support\.type|constant\.language|entity\.name\.tag\.yaml|punctuation\.separator\.key-value\.mapping\.yaml)(\.|$)/;

const rules = (g: Grammar) => g.patterns.map((p) => (p.include ? g.repository[p.include.slice(1)] : p));

/** What the injection patterns alone would scope in a line: [text, scope] pairs, leftmost match first. */
function scan(g: Grammar, line: string): Array<[string, string]> {
  const compiled = rules(g).map((r) => ({ r, re: new RegExp(r.match!, 'y') }));
  const out: Array<[string, string]> = [];
  for (let pos = 0; pos < line.length;) {
    const hit = compiled.map(({ r, re }) => { re.lastIndex = pos; return { r, m: re.exec(line) }; }).find((x) => x.m && x.m[0].length);
    if (!hit) { pos++; continue; }
    const { r, m } = hit;
    if (r.captures) for (const [i, c] of Object.entries(r.captures)) { if (m![Number(i)]) out.push([m![Number(i)], c.name]); }
    else out.push([m![0], r.name!]);
    pos += m![0].length;
  }
  return out;
}

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

test('YAML snapshot: observers, dtypes, qschemes, backends, precision, flow', () => {
  const g = grammars.yaml;
  assert.deepEqual(scan(g, '  activation: {observer: MovingAverageMinMaxObserver, dtype: quint8, qscheme: per_tensor_affine}'), [
    ['MovingAverageMinMaxObserver', 'support.type.observer.qat-studio'],
    ['dtype', 'entity.name.tag.yaml'], [':', 'punctuation.separator.key-value.mapping.yaml'], ['quint8', 'support.type.dtype.qat-studio'],
    ['per_tensor_affine', 'constant.language.qscheme.qat-studio'],
  ]);
  assert.deepEqual(scan(g, 'backend: x86'), [['backend', 'entity.name.tag.yaml'], [':', 'punctuation.separator.key-value.mapping.yaml'], ['x86', 'constant.language.backend.qat-studio']]);
  assert.deepEqual(scan(g, '  - {match: "fc", precision: fp16}').map(([, s]) => s).pop(), 'constant.language.precision.qat-studio');
  assert.deepEqual(scan(g, 'flow: pt2e').pop(), ['pt2e', 'constant.language.flow.qat-studio']);
  assert.deepEqual(scan(g, 'name: x86_64 # MinMaxObserverX'), []);
});

test('Python snapshot: QAT calls, classes and torch constants', () => {
  const g = grammars.python;
  assert.deepEqual(scan(g, 'm = tq.prepare_qat(m); q = convert_pt2e(p)'), [['prepare_qat', 'support.function.qat-studio'], ['convert_pt2e', 'support.function.qat-studio']]);
  assert.deepEqual(scan(g, 'fq = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, dtype=torch.qint8, qscheme=torch.per_channel_symmetric)'), [
    ['FakeQuantize', 'support.type.qat-studio'], ['MovingAverageMinMaxObserver', 'support.type.qat-studio'],
    ['qint8', 'constant.language.qat-studio'], ['per_channel_symmetric', 'constant.language.qat-studio'],
  ]);
  assert.deepEqual(scan(g, 'model.qconfig = QConfig(activation=a, weight=w)'), [['QConfig', 'support.type.qat-studio']]);
  assert.deepEqual(scan(g, 'prepare_qat_result = my_prepare_qat + prepare_qat'), []);
});
