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
