// The budget behind "diagnostics within 50 ms of an edit": one full analysis of a 2,000-line Python file
// and of a 500-line YAML config. Checked loosely here (CI machines vary); the numbers are printed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configFindings } from '../../server/services/configDiagnostics';
import { pythonFindings } from '../../server/services/pythonDiagnostics';
import { config, fixture } from './helpers/builder';

function median(run: () => void, times = 7): number {
  const ms: number[] = [];
  for (let i = 0; i < times; i++) {
    const t = performance.now();
    run();
    ms.push(performance.now() - t);
  }
  return ms.sort((a, b) => a - b)[Math.floor(times / 2)];
}

test('a 2,000-line Python script and a 500-line config are analysed well within the edit budget', () => {
  let py = '';
  const parts = ['eager_qat_good.py', 'seed_eager_tutorial_bad.py', 'pt2e_qat_good.py', 'seed_pt2e_traps_bad.py'].map(
    fixture,
  );
  for (let i = 0; py.split('\n').length < 2000; i++) py += parts[i % parts.length].replace(/^# expect:.*\n/, '') + '\n';
  const overrides = Array.from(
    { length: 480 },
    (_, i) => `match: "layer${i}\\\\.conv[0-9]", weight: {observer: PerChannelMinMaxObserver, dtype: qint8}`,
  );
  const yaml = config({ activation: 'dtype: quint8', overrides });
  const pyMs = median(() => pythonFindings(py));
  // An edit: the previous tree of the same document is reused outside the changed span.
  let edits = 0;
  pythonFindings(py, 'big.py');
  const editMs = median(() => pythonFindings(py.replace('steps: int = 100', `steps: int = ${++edits}`), 'big.py'));
  const yamlMs = median(() => configFindings(yaml));
  console.log(
    `python ${py.split('\n').length} lines: ${pyMs.toFixed(1)} ms, after an edit ${editMs.toFixed(1)} ms; yaml ${yaml.split('\n').length} lines: ${yamlMs.toFixed(1)} ms`,
  );
  assert.ok(pyMs < 500 && editMs < 500 && yamlMs < 500, `python ${pyMs} ms, edit ${editMs} ms, yaml ${yamlMs} ms`);
});
