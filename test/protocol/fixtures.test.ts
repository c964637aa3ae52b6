// The RPC fixtures that pytest also checks: each must validate against its schema definition here too.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import Ajv from 'ajv';
import rpcSchema from '../../protocol/kernel-rpc.schema.json';
import configSchema from '../../protocol/qat-config.schema.json';
import { parse } from 'yaml';

const root = path.resolve(__dirname, '..', '..', '..');
const fixtures = path.join(root, 'protocol', 'fixtures', 'rpc');
// A fixture is named after the definition it is a sample of: `<Definition>.json` or `<Definition>.<case>.json`.
const definitionFor = (file: string) => file.split('.')[0];

const ajv = new Ajv({ allErrors: true, strict: false });
ajv.addSchema(rpcSchema, 'rpc');

for (const file of readdirSync(fixtures)) {
  test(`fixture ${file} matches its schema definition`, () => {
    const validate = ajv.getSchema(`rpc#/definitions/${definitionFor(file)}`);
    assert.ok(validate, `${file}: no definition ${definitionFor(file)} in the RPC schema`);
    const ok = validate(JSON.parse(readFileSync(path.join(fixtures, file), 'utf8')));
    assert.ok(ok, JSON.stringify(validate.errors));
  });
}

test('a mangled fixture is rejected (the check can fail)', () => {
  const validate = ajv.getSchema('rpc#/definitions/CompareLayersResult')!;
  const bad = JSON.parse(readFileSync(path.join(fixtures, 'CompareLayersResult.json'), 'utf8'));
  delete bad.layers[0].cosine;
  assert.equal(validate(bad), false);
});

test('the example configs validate against the config schema', () => {
  const validate = new Ajv({ strict: false }).compile(configSchema);
  for (const file of ['examples/digits/digits.qat.yaml']) {
    assert.ok(
      validate(parse(readFileSync(path.join(root, file), 'utf8'))),
      `${file}: ${JSON.stringify(validate.errors)}`,
    );
  }
});
