import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configFindings } from '../../server/services/configDiagnostics';
import { applyFix, config, spanOf, yamlCodes } from './helpers/builder';

test('QCFG014: literal names an earlier regex already matches, and a narrower prefix', () => {
  const text = config({ overrides: ['match: "conv1|fc", precision: fp32', 'match: "fc", precision: fp16'] });
  const [f] = yamlCodes(text, 'QCFG014');
  assert.equal(spanOf(text, f), '"fc"');
  assert.match(f.message, /override 0 \(match "conv1\|fc"\) comes first/);
  const prefix = config({
    overrides: ['match: "layer.*", precision: fp32', 'match: "layer4\\\\..*", precision: fp16'],
  });
  assert.equal(yamlCodes(prefix, 'QCFG014').length, 1);
  assert.equal(
    yamlCodes(config({ overrides: ['match: ".*", precision: fp32', 'match: "x", precision: int8'] }), 'QCFG014').length,
    1,
  );
});

test('QCFG014: in a block list the fix moves the shadowed override above', () => {
  const text = `${config()}overrides:\n  - match: "layer.*"\n    precision: fp32\n  - match: "layer1"\n    precision: fp16\n`;
  const [f] = yamlCodes(text, 'QCFG014');
  const fixed = applyFix(text, f);
  assert.match(
    fixed,
    /overrides:\n {2}- match: "layer1"\n {4}precision: fp16\n {2}- match: "layer\.\*"\n {4}precision: fp32\n$/,
  );
  assert.deepEqual(configFindings(fixed), []);
});

test('QCFG014 is quiet when the later override matches something new', () => {
  assert.deepEqual(
    yamlCodes(
      config({
        overrides: [
          'match: "fc", precision: fp16',
          'match: "conv1|fc", precision: fp32',
          'match: "layer4\\\\..*", precision: bf16',
        ],
      }),
      'QCFG014',
    ),
    [],
  );
});
