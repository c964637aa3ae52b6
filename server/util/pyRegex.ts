// Python `re` patterns from a user's document, checked with JS's parser (syntax errors as Python reports them)
// and matched with RE2 (re2js), whose running time is linear in the input: a pattern such as `(a+)+$` cannot
// keep the language server busy. Python features RE2 lacks (backreferences, lookaround, atomic groups,
// possessive quantifiers, conditionals) come back as `unsupported` with the reason, never as a slow match.
import { RE2JS } from 're2js';

/** A compiled pattern; `test` is Python's re.fullmatch (linear time). */
export interface LinearRegex {
  readonly source: string;
  test(input: string): boolean;
}

export type PyRegex =
  { ok: true; regex: LinearRegex } | { ok: false; error: string } | { ok: 'unsupported'; reason: string };

// Escapes Python's re accepts; any other backslash-letter is "bad escape" there (Python >= 3.7).
const PY_ESCAPES = new Set('abBdDfnNrsStuUvwWxAZ'.split(''));

// Python constructs the linear-time matcher cannot run, first match wins.
const UNSUPPORTED: Array<[RegExp, string]> = [
  [/\(\?P=\w+\)|\\[1-9]|\\k</, 'backreference'],
  [/\(\?<[=!]/, 'lookbehind'],
  [/\(\?[=!]/, 'lookahead'],
  [/\(\?>/, 'atomic group'],
  [/[*+?}]\+/, 'possessive quantifier'],
  [/\(\?\(/, 'conditional group'],
  [/\(\?[aiLmsux]*x/, 'verbose flag (?x)'],
  [/\(\?[aiLmsux]*[aLu]/, 'flag (?a), (?L) or (?u)'],
];

export const UNSUPPORTED_PREFIX = 'not supported by the linear-time matcher';

/** Python's `(?P<n>…)`/`\Z` spelled for the JS parser or for RE2, skipping escaped backslashes. */
function translate(pattern: string, target: 'js' | 're2'): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      const next = pattern[i + 1] ?? '';
      if (next === 'Z') out += target === 'js' ? '$' : '\\z';
      else if (next === 'A') out += target === 'js' ? '^' : '\\A';
      else out += c + next;
      i++;
    } else if (target === 'js' && pattern.startsWith('(?P<', i)) {
      out += '(?<';
      i += 3;
    } else if (target === 'js' && pattern.startsWith('(?P=', i)) {
      const close = pattern.indexOf(')', i);
      out += `\\k<${pattern.slice(i + 4, close)}>`;
      i = close;
    } else if (pattern.startsWith('(?#', i)) {
      const close = pattern.indexOf(')', i);
      i = close < 0 ? pattern.length : close;
    } else out += c;
  }
  return out;
}

function flagsOf(pattern: string): { flags: string; rest: string } {
  let flags = '';
  const rest = pattern.replace(/^\(\?([aiLmsux]+)\)/, (_, f: string) => {
    for (const c of f) if ('ims'.includes(c) && !flags.includes(c)) flags += c;
    return '';
  });
  return { flags, rest };
}

export function compilePython(pattern: string): PyRegex {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] !== '\\') continue;
    const next = pattern[i + 1];
    if (next === undefined) return { ok: false, error: 'bad escape (end of pattern)' };
    if (/[A-Za-z]/.test(next) && !PY_ESCAPES.has(next))
      return { ok: false, error: `bad escape \\${next} at position ${i}` };
    i++;
  }
  // Escaped characters cannot start a construct (`\\(?=` is a literal paren), backreferences stay.
  const plain = pattern.replace(/\\([^1-9k])/g, '_');
  const unsupported = UNSUPPORTED.find(([re]) => re.test(plain))?.[1];
  const { flags, rest } = flagsOf(pattern);
  // Syntax check only: JS compiles the pattern but never runs it on input.
  try {
    new RegExp(`^(?:${translate(rest, 'js')})$`, flags);
  } catch (err) {
    if (unsupported) return { ok: 'unsupported', reason: `${UNSUPPORTED_PREFIX}: ${unsupported}` };
    const message = (err as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /, '');
    return { ok: false, error: message };
  }
  if (unsupported) return { ok: 'unsupported', reason: `${UNSUPPORTED_PREFIX}: ${unsupported}` };
  let re2: RE2JS;
  try {
    const bits =
      (flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0) |
      (flags.includes('m') ? RE2JS.MULTILINE : 0) |
      (flags.includes('s') ? RE2JS.DOTALL : 0);
    re2 = RE2JS.compile(translate(rest, 're2'), bits);
  } catch (err) {
    const message = (err as Error).message.replace(/^error parsing regexp: /, '');
    return { ok: 'unsupported', reason: `${UNSUPPORTED_PREFIX}: ${message}` };
  }
  return { ok: true, regex: { source: pattern, test: (input: string) => re2.matches(input) } };
}

/** The strings a pattern matches when it is a plain literal or an alternation of literals, else undefined. */
export function literalAlternatives(pattern: string): string[] | undefined {
  const parts = pattern.split('|');
  const out: string[] = [];
  for (const part of parts) {
    if (/[\\.*+?()[\]{}^$]/.test(part.replace(/\\[.\-_/]/g, ''))) return undefined;
    out.push(part.replace(/\\([.\-_/])/g, '$1'));
  }
  return out;
}
