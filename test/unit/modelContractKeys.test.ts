// The model contract's keys (model.example_input as a shape, a list or a map of input specs; model.output;
// data.inputs / data.target; train.loss) in the language server: completion, hover and diagnostics from the schema.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configFindings } from '../../server/services/configDiagnostics';
import { yamlCompletion } from '../../server/services/yamlCompletion';
import { yamlHover } from '../../server/services/yamlHover';
import { cursor, yamlDoc } from './helpers/builder';

const labels = (textWithBar: string) => {
  const { text, offset } = cursor(textWithBar);
  const doc = yamlDoc(text);
  return yamlCompletion(doc, doc.positionAt(offset)).items.map((i) => i.label);
};
const hover = (textWithBar: string) => {
  const { text, offset } = cursor(textWithBar);
  const doc = yamlDoc(text);
  const h = yamlHover(doc, doc.positionAt(offset));
  return h ? (h.contents as { value: string }).value : '';
};
const HEAD = 'version: 1\nqconfig: {}\n';
const codes = (text: string) => configFindings(text).map((f) => `${f.code} ${f.message}`);

test('an input spec completes its keys and its dtypes, by name or by position', () => {
  const named = `${HEAD}model:\n  entry: "m.py:f"\n  example_input:\n    input_ids: {|}\n`;
  assert.deepEqual(labels(named).sort(), ['dtype', 'fill', 'range', 'shape']);
  assert.ok(labels(`${HEAD}model:\n  example_input:\n    input_ids: {shape: [2, 8], dtype: |}\n`).includes('int64'));
  assert.ok(labels(`${HEAD}model:\n  example_input:\n    - {shape: [2, 8], dtype: |}\n`).includes('int64'));
  assert.ok(labels(`${HEAD}model:\n  entry: "m.py:f"\n  |`).includes('output'));
  assert.ok(labels(`${HEAD}data:\n  entry: "d.py:f"\n  |`).includes('target'));
  assert.deepEqual(labels(`${HEAD}train:\n  loss: |`), ['auto', 'cross_entropy', 'next_token']);
});

test('hover explains the new keys', () => {
  assert.match(hover(`${HEAD}model:\n  entry: "m.py:f"\n  out|put: logits\n`), /ModelOutput/);
  assert.match(hover(`${HEAD}train:\n  lo|ss: next_token\n`), /causal language modelling/);
  assert.match(hover(`${HEAD}model:\n  example_input:\n    input_ids: {shape: [2, 8], dt|ype: int64}\n`), /token ids/);
});

test('every form of example_input is valid, and a bad spec is flagged where it is', () => {
  const model = (example: string) => `${HEAD}model:\n  entry: "m.py:f"\n  example_input: ${example}\n`;
  assert.deepEqual(codes(model('[2, 3, 32, 32]')), []);
  assert.deepEqual(codes(model('[{shape: [2, 3, 32, 32]}, {shape: [2, 4], dtype: int64, range: [0, 9]}]')), []);
  assert.deepEqual(codes(model('{input_ids: {shape: [2, 16], dtype: int64, range: [0, 1000]}, attention_mask: {shape: [2, 16], dtype: int64, fill: 1}}')), []); // prettier-ignore
  assert.deepEqual(codes(`${HEAD}model: {entry: "m.py:f"}\ntrain: {loss: loss.py:mine}\ndata: {entry: "d.py:l", target: labels}\n`), []); // prettier-ignore
  const bad = codes(model('{input_ids: {shape: [2, 16], dtype: long}}'));
  assert.equal(bad.length, 1, bad.join('\n'));
  assert.match(bad[0], /int64/);
  const listed = codes(model('[{shape: [2, 3, 32, 32]}, {shape: [2, 4], dtype: long}]'));
  assert.equal(listed.length, 1, listed.join('\n'));
  assert.match(listed[0], /example_input\.1\.dtype must be one of/);
  assert.deepEqual(codes(model('"2x3"')), ['QCFG000 model.example_input must be array or object.']);
  assert.ok(codes(`${HEAD}model: {entry: "m.py:f"}\ntrain: {loss: l2}\n`).length > 0);
});
