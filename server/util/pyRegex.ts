// Python `re` patterns checked with the JS engine: the common syntax is shared, the rest is translated,
// and Python-only constructs JS cannot compile are reported as unknown rather than as errors.

export type PyRegex = { ok: true; regex: RegExp } | { ok: false; error: string } | { ok: 'unknown' };

// Escapes Python's re accepts; any other backslash-letter is "bad escape" there (Python >= 3.7).
const PY_ESCAPES = new Set('abBdDfnNrsStuUvwWxAZ'.split(''));
const PY_ONLY = /\(\?>|[*+?}]\+|\(\?\(|\(\?[aiLmsux]*x/;

export function compilePython(pattern: string): PyRegex {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] !== '\\') continue;
    const next = pattern[i + 1];
    if (next === undefined) return { ok: false, error: 'bad escape (end of pattern)' };
    if (/[A-Za-z]/.test(next) && !PY_ESCAPES.has(next))
      return { ok: false, error: `bad escape \\${next} at position ${i}` };
    i++;
  }
  let flags = '';
  let source = pattern.replace(/^\(\?([aiLmsux]+)\)/, (_, f: string) => {
    for (const c of f) if ('ims'.includes(c) && !flags.includes(c)) flags += c;
    return '';
  });
  source = source
    .replace(/\(\?#[^)]*\)/g, '')
    .replace(/\(\?P<(\w+)>/g, '(?<$1>')
    .replace(/\(\?P=(\w+)\)/g, '\\k<$1>')
    .replace(/\\A/g, '^')
    .replace(/\\Z/g, '$');
  try {
    return { ok: true, regex: new RegExp(`^(?:${source})$`, flags) };
  } catch (err) {
    if (PY_ONLY.test(pattern)) return { ok: 'unknown' };
    const message = (err as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /, '');
    return { ok: false, error: message };
  }
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
