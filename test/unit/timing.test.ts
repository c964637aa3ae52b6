// A 2,000-line Python file and a 500-line YAML config, the sizes behind "diagnostics within 50 ms of an
// edit": analysed without error, an edit reuses the previous tree and gives what a fresh analysis gives.
// Their speed is `npm run bench languageServer`'s concern (p95 against goals, measured in one run), never
// asserted here.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configFindings } from '../../server/services/configDiagnostics';
import { forgetPython, pythonFindings } from '../../server/services/pythonDiagnostics';
import { config, fixture } from './helpers/builder';

const codes = (fs: Array<{ code: string; start: number }>) => fs.map((f) => `${f.code}@${f.start}`).sort();

test('a 2,000-line Python script: an incremental re-analysis after an edit equals a fresh one', () => {
  let py = '';
  const parts = ['eager_qat_good.py', 'seed_eager_tutorial_bad.py', 'pt2e_qat_good.py', 'seed_pt2e_traps_bad.py'].map(
    fixture,
  );
  for (let i = 0; py.split('\n').length < 2000; i++) py += parts[i % parts.length].replace(/^# expect:.*\n/, '') + '\n';
  const fresh = pythonFindings(py);
  assert.ok(fresh.length > 0, 'the seeded traps are found');
  pythonFindings(py, 'big.py');
  for (let edit = 1; edit <= 3; edit++) {
    const edited = py.replace('steps: int = 100', `steps: int = ${edit}`);
    assert.notEqual(edited, py);
    const incremental = pythonFindings(edited, 'big.py');
    assert.deepEqual(codes(incremental), codes(pythonFindings(edited)), `edit ${edit}`);
  }
  forgetPython('big.py');
});

test('a 500-line config with 480 overrides is analysed, each override checked', () => {
  const overrides = Array.from(
    { length: 480 },
    (_, i) => `match: "layer${i}\\\\.conv[0-9]", weight: {observer: PerChannelMinMaxObserver, dtype: qint8}`,
  );
  const yaml = config({ activation: 'dtype: quint8', overrides: [...overrides, overrides[7]] });
  const findings = configFindings(yaml);
  // The repeated last override is shadowed by the 8th, and nothing else is reported about the others.
  assert.deepEqual(
    findings.filter((f) => f.code === 'QCFG014').map((f) => yaml.slice(f.start, f.end)),
    ['"layer7\\\\.conv[0-9]"'],
  );
});
