import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { compilePython } from '../../server/util/pyRegex';
import { config, spanOf, yamlCodes } from './helpers/builder';

// A name of 40 `a` and a `!`: a backtracking engine tries 2^40 ways to split it for `(a+)+$`.
const LONG = 'a'.repeat(40) + '!';

// Run as a child (below) the hostile matches happen here, so a backtracking engine stalls the child, which the
// parent kills, and the test fails on the missing answer instead of hanging.
if (process.env.QAT_REGEX_CHILD === '1') {
  const hostile = compilePython('(a+)+$');
  const shadow = config({ overrides: ['match: "(a+)+$", precision: fp32', `match: "${LONG}", precision: fp16`] });
  const answer = {
    hostile: hostile.ok === true ? hostile.regex.test(LONG) : hostile.ok,
    nested: (() => {
      const r = compilePython('(a|aa)*b');
      return r.ok === true ? r.regex.test('a'.repeat(5000)) : r.ok;
    })(),
    shadowed: yamlCodes(shadow, 'QCFG014').length,
    positive: (() => {
      const r = compilePython('(a+)+$');
      return r.ok === true ? r.regex.test('a'.repeat(5000)) : r.ok;
    })(),
  };
  process.stdout.write(JSON.stringify(answer));
  process.exit(0);
}

test('QCFG013: a match that does not compile, and a Python bad escape', () => {
  const text = config({ overrides: ['match: "layer4\\\\..*(", precision: fp32'] });
  const [f] = yamlCodes(text, 'QCFG013');
  assert.equal(spanOf(text, f), '"layer4\\\\..*("');
  assert.equal(f.severity, 'error');
  assert.match(f.message, /not a valid regular expression: Unterminated group/);
  assert.match(
    yamlCodes(config({ overrides: ["match: 'conv\\q', precision: fp32"] }), 'QCFG013')[0].message,
    /bad escape \\q/,
  );
});

test('QCFG013 is quiet on valid Python regexes the linear-time matcher runs', () => {
  for (const ok of [
    'conv1|fc',
    'layer[1-4]\\\\.\\\\d+\\\\.conv\\\\d',
    '(?P<block>layer\\\\d)\\\\.conv',
    '(?i)FC',
    'x\\\\Z',
  ]) {
    assert.deepEqual(yamlCodes(config({ overrides: [`match: "${ok}", precision: fp32`] }), 'QCFG013'), [], ok);
  }
  assert.equal(compilePython('(?i)FC').ok, true);
});

test('QCFG013: Python-only syntax the linear-time matcher lacks is information, naming the feature', () => {
  for (const [pattern, feature] of [
    ['(?P<block>layer\\\\d)\\\\.(?P=block)', 'backreference'],
    ['(conv)\\\\1', 'backreference'],
    ['layer(?=4)', 'lookahead'],
    ['(?<!x)conv', 'lookbehind'],
    ['a(?>b)c', 'atomic group'],
    ['a++', 'possessive quantifier'],
  ]) {
    const found = yamlCodes(config({ overrides: [`match: "${pattern}", precision: fp32`] }), 'QCFG013');
    assert.equal(found.length, 1, pattern);
    assert.equal(found[0].severity, 'information', pattern);
    assert.match(found[0].message, new RegExp(`not supported by the linear-time matcher: ${feature}`), pattern);
  }
  // An escaped paren starts no lookahead.
  assert.equal(compilePython('\\(?=').ok, true);
});

test('override regexes match as re.fullmatch does', () => {
  const cases: Array<[string, string, boolean]> = [
    ['layer4\\..*', 'layer4.0.conv1', true],
    ['layer4\\..*', 'xlayer4.0', false],
    ['conv1|fc', 'fc', true],
    ['conv1|fc', 'fc2', false],
    ['(?i)FC', 'fc', true],
    ['(?P<b>layer\\d)\\.conv', 'layer2.conv', true],
    ['fc\\Z', 'fc', true],
    ['\\Afc', 'fc', true],
    ['fc(?#comment)', 'fc', true],
    ['a{2,3}', 'aaaa', false],
    ['\\\\Z', '\\Z', true],
  ];
  for (const [pattern, name, expected] of cases) {
    const r = compilePython(pattern);
    assert.equal(r.ok, true, pattern);
    assert.equal(r.ok === true && r.regex.test(name), expected, `${pattern} on ${name}`);
  }
});

test('a catastrophic-backtracking override is answered correctly (in a child the test can stop)', () => {
  const child = spawnSync(process.execPath, [__filename], {
    env: { ...process.env, QAT_REGEX_CHILD: '1' },
    encoding: 'utf8',
    timeout: 60_000,
    killSignal: 'SIGKILL',
  });
  assert.equal(child.signal, null, 'the matcher did not return (killed after 60 s)');
  assert.deepEqual(JSON.parse(child.stdout), { hostile: false, nested: false, shadowed: 0, positive: true });
});
