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
const definitionFor = (file: string) =>
  (
    ({
      'kernel-info.result': 'KernelInfoResult',
      'compare-layers.params': 'CompareLayersParams',
      'compare-layers.result': 'CompareLayersResult',
      progress: 'ProgressParams',
      'progress-train-step': 'ProgressParams',
      'progress-epoch': 'ProgressParams',
      'qat-train.params': 'QatTrainParams',
      'qat-train.result': 'QatTrainResult',
      'eval-accuracy.params': 'EvalAccuracyParams',
      'eval-accuracy.result': 'EvalAccuracyResult',
      'export-onnx.params': 'ExportOnnxParams',
      'export-onnx.result': 'ExportOnnxResult',
      'sensitivity.params': 'SensitivityParams',
      'sensitivity.result': 'SensitivityResult',
      'build-tvm.params': 'BuildTvmParams',
      'build-tvm.result': 'BuildTvmResult',
      'build-tvm-rpc.result': 'BuildTvmResult',
      'build-ort.params': 'BuildOrtParams',
      'build-ort.result': 'BuildOrtResult',
      'build-inductor.params': 'BuildInductorParams',
      'build-inductor.result': 'BuildInductorResult',
      'verify-parity.params': 'VerifyParityParams',
      'verify-parity.result': 'VerifyParityResult',
      'deploy-c-artifact.params': 'DeployCParams',
      'deploy-c-artifact.result': 'DeployCResult',
      'bench-run.params': 'BenchRunParams',
      'bench-run.result': 'BenchRunResult',
      'graph-export.params': 'GraphExportParams',
      'graph-export.result': 'GraphExportResult',
      'qat-convert.params': 'QatConvertParams',
      'qat-convert.result': 'QatConvertResult',
      'histograms.params': 'HistogramsParams',
      'histograms.result': 'HistogramsResult',
    }) as Record<string, string>
  )[file.replace(/\.json$/, '')] ?? (file.startsWith('error-') ? 'KernelErrorData' : undefined);

const ajv = new Ajv({ allErrors: true, strict: false });
ajv.addSchema(rpcSchema, 'rpc');

for (const file of readdirSync(fixtures)) {
  test(`fixture ${file} matches its schema definition`, () => {
    const def = definitionFor(file);
    assert.ok(def, `no definition mapped for ${file}`);
    const validate = ajv.getSchema(`rpc#/definitions/${def}`)!;
    const ok = validate(JSON.parse(readFileSync(path.join(fixtures, file), 'utf8')));
    assert.ok(ok, JSON.stringify(validate.errors));
  });
}

test('a mangled fixture is rejected (the check can fail)', () => {
  const validate = ajv.getSchema('rpc#/definitions/CompareLayersResult')!;
  const bad = JSON.parse(readFileSync(path.join(fixtures, 'compare-layers.result.json'), 'utf8'));
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
