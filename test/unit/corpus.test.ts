// The corpus (test/corpus/*.py): scripts in the styles of public QAT code, each with the diagnostics it must
// get. Any other diagnostic is a false alarm and fails; a listed one that is missing is a miss and fails.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { pythonFindings } from '../../server/services/pythonDiagnostics';
import { repoRoot } from './helpers/builder';

const dir = path.join(repoRoot, 'test', 'corpus');
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.py'))
  .sort();

/** `# expect: QAT010@25 QAT004@12` or `# expect: none`. */
function expected(text: string): string[] {
  const m = /^# expect:(.*)$/m.exec(text);
  if (!m) throw new Error('no `# expect:` line');
  const items = m[1].trim().split(/\s+/).filter(Boolean);
  return items.length === 1 && items[0] === 'none' ? [] : items;
}

test('the corpus has at least 25 scripts', () => {
  assert.ok(files.length >= 25, `${files.length} scripts`);
});

for (const file of files) {
  test(`corpus ${file}: exactly the expected diagnostics`, () => {
    const text = readFileSync(path.join(dir, file), 'utf8');
    const want = expected(text).sort();
    const findings = pythonFindings(text);
    const line = (offset: number) => text.slice(0, offset).split('\n').length;
    const got = findings.map((f) => `${f.code}@${line(f.start)}`).sort();
    const detail = findings.map((f) => `  ${f.code}@${line(f.start)} ${f.severity}: ${f.message}`).join('\n');
    assert.deepEqual(got, want, `${file}\n${detail}`);
  });
}
