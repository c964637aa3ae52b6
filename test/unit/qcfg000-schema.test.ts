import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { configFindings, isQatConfig } from '../../server/services/configDiagnostics';
import { applyFix, config, repoRoot, spanOf, yamlCodes } from './helpers/builder';

test('QCFG000: a wrong enum value gets a did-you-mean and a fix', () => {
  const text = config({ backend: 'x68' });
  const [f] = yamlCodes(text, 'QCFG000');
  assert.equal(spanOf(text, f), 'x68');
  assert.match(f.message, /backend must be one of: .*Did you mean 'x86'\?/);
  assert.deepEqual(configFindings(applyFix(text, f)), []);
});

test('QCFG000: wrong types and version are errors; a valid config is clean', () => {
  assert.equal(yamlCodes(config().replace('version: 1', 'version: 2'), 'QCFG000').length, 1);
  assert.equal(yamlCodes(config({ activation: 'quant_min: zero' }), 'QCFG000').length, 1);
  assert.deepEqual(configFindings(config({ activation: 'observer: MinMaxObserver, dtype: quint8' })), []);
});

test('YAML syntax errors are reported and stop the semantic rules', () => {
  const broken = configFindings('version: 1\nqconfig: {activation: [\n');
  assert.ok(broken.length > 0 && broken.every((f) => f.code === 'YAML'));
});

test('config files are recognised by name or by content', () => {
  assert.ok(isQatConfig('file:///w/a.qat.yaml', ''));
  assert.ok(isQatConfig('file:///w/a.yaml', 'version: 1\nqconfig:\n  activation: {}\n'));
  assert.ok(!isQatConfig('file:///w/docker-compose.yaml', 'version: "3"\nservices: {}\n'));
});

test('the shipped example configs have no errors or warnings', () => {
  const dir = path.join(repoRoot, 'examples', 'digits');
  for (const file of readdirSync(dir).filter((f) => /\.qat\.ya?ml$/.test(f))) {
    const loud = configFindings(readFileSync(path.join(dir, file), 'utf8')).filter(
      (f) => f.severity === 'error' || f.severity === 'warning',
    );
    assert.deepEqual(loud, [], file);
  }
});

const torchao = (section: string) => `version: 1\nmodel: {entry: "model.py:make_model"}\nflow: torchao\n${section}`;

test('QCFG000: flow: torchao needs no qconfig, the other flows still do; its values are told one finding each', () => {
  assert.deepEqual(configFindings(torchao('torchao: {scheme: 8da4w, group_size: 32}\n')), []);
  const pt2e = 'version: 1\nmodel: {entry: "model.py:make_model"}\nflow: pt2e\n';
  assert.deepEqual(
    configFindings(pt2e).map((f) => [f.code, f.message]),
    [['QCFG003', "the config is missing the required key 'qconfig'."]],
  );
  const bad = configFindings(torchao('torchao: {scheme: 4bit, group_size: 0}\n'));
  assert.deepEqual(
    bad.map((f) => f.code),
    ['QCFG000', 'QCFG000'],
    JSON.stringify(bad),
  );
  assert.match(bad[0].message, /^torchao\.scheme must be one of: 8da4w, 8da8w, int4-weight-only, int8-weight-only\./);
  assert.equal(bad[1].message, 'torchao.group_size must be >= 1.', 'the integer form, not per_channel');
  const typo = configFindings(torchao('torchao: {group_size: per_chanel}\n'));
  assert.deepEqual(
    typo.map((f) => f.message),
    ["torchao.group_size must be one of: per_channel. Did you mean 'per_channel'?"],
  );
});

test('the tinylm example config (flow: torchao) is clean', () => {
  const text = readFileSync(path.join(repoRoot, 'examples', 'tinylm', 'tinylm.qat.yaml'), 'utf8');
  assert.deepEqual(configFindings(text), []);
});
