// Real-world-style scripts: correct ones must stay clean (eager/FX get only the QAT004 migration hint),
// seed-style buggy ones must produce exactly the codes on their `# expect:` line.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { pythonFindings } from '../../server/services/pythonDiagnostics';
import { fixture, repoRoot } from './helpers/builder';

const dir = path.join(repoRoot, 'test', 'unit', 'fixtures-python');
const files = readdirSync(dir).filter((f) => f.endsWith('.py'));

test('there are good and bad fixtures', () => {
  assert.ok(files.filter((f) => f.includes('_good')).length >= 5);
  assert.ok(files.filter((f) => f.includes('_bad')).length >= 3);
});

for (const file of files) {
  test(`fixture ${file} gives exactly its expected codes`, () => {
    const text = fixture(file);
    const expected = /^# expect:(.*)$/m.exec(text)?.[1].trim().split(/\s+/).filter(Boolean) ?? [];
    const findings = pythonFindings(text);
    const got = findings.map((f) => f.code).sort();
    assert.deepEqual(got, [...expected].sort(), findings.map((f) => `${f.code}: ${f.message}`).join('\n'));
    if (file.includes('_good'))
      assert.ok(
        findings.every((f) => f.severity === 'information'),
        'only information on correct code',
      );
  });
}

test('the shipped examples are clean', () => {
  const script = readFileSync(path.join(repoRoot, 'examples', 'digits', 'qat_train.py'), 'utf8');
  assert.deepEqual(
    pythonFindings(script).filter((f) => f.severity !== 'information'),
    [],
  );
});
