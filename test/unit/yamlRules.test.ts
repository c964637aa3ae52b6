import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configFindings, isQatConfig } from '../../server/services/configDiagnostics';

const config = (activation: string) => `version: 1
model: {entry: "model.py:make_model", example_input: [2, 1, 8, 8]}
qconfig:
  activation: {${activation}}
  weight: {observer: PerChannelMinMaxObserver, dtype: qint8, qscheme: per_channel_symmetric, quant_min: -128, quant_max: 127}
`;

test('QCFG001 fires on quant_max outside quint8, with the exact range and span', () => {
  const text = config('observer: MinMaxObserver, dtype: quint8, quant_min: 0, quant_max: 300');
  const hits = configFindings(text).filter((f) => f.code === 'QCFG001');
  assert.equal(hits.length, 1);
  assert.equal(hits[0].message, 'quant_max 300 is outside the range of quint8 (0..255).');
  assert.equal(text.slice(hits[0].start, hits[0].end), '300');
});

test('QCFG001 knows qint8 and flags quant_min >= quant_max', () => {
  const text = config('observer: MinMaxObserver, dtype: qint8, quant_min: -129, quant_max: -200');
  const messages = configFindings(text).filter((f) => f.code === 'QCFG001').map((f) => f.message);
  assert.deepEqual(messages, [
    'quant_min -129 is outside the range of qint8 (-128..127).',
    'quant_max -200 is outside the range of qint8 (-128..127).',
    'quant_min -129 must be smaller than quant_max -200.',
  ]);
});

test('QCFG001 stays quiet on a correct config', () => {
  const text = config('observer: MovingAverageMinMaxObserver, dtype: quint8, quant_min: 0, quant_max: 255');
  assert.deepEqual(configFindings(text), []);
});

test('schema errors point at the offending key; YAML syntax errors are reported', () => {
  const text = config('observer: MinMaxObserver, dtype: quint8, quant_mx: 255');
  const [unknown] = configFindings(text);
  assert.equal(unknown.code, 'QCFG000');
  assert.match(unknown.message, /Unknown key 'quant_mx' in qconfig\.activation/);
  assert.equal(text.slice(unknown.start, unknown.end), 'quant_mx');
  const broken = configFindings('version: 1\nqconfig: {activation: [\n');
  assert.ok(broken.length > 0 && broken.every((f) => f.code === 'YAML'));
});

test('config files are recognised by name or by content', () => {
  assert.ok(isQatConfig('file:///w/a.qat.yaml', ''));
  assert.ok(isQatConfig('file:///w/a.yaml', 'version: 1\nqconfig:\n  activation: {}\n'));
  assert.ok(!isQatConfig('file:///w/docker-compose.yaml', 'version: "3"\nservices: {}\n'));
});
