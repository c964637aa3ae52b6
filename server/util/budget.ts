// How much of a huge document the server analyses. A Python file is analysed up to the last line that fits in
// PYTHON_CHARS, a config up to the last list item or top-level key that starts within CONFIG_CHARS
// (diagnostics, hover and semantic tokens alike); a config's override rules (pairwise shadowing) look at its
// first MAX_OVERRIDES overrides. Past the budget the user gets one information diagnostic saying
// where analysis stopped and why, instead of a server that stops answering.
import type { Finding } from '../rules/types';

export const PYTHON_CHARS = 200_000;
export const CONFIG_CHARS = 512_000;
export const MAX_OVERRIDES = 1000;
export const SIZE_CODE = 'SIZE';
/** Override patterns tried against an exported graph's module paths (about 1 µs each): per hover, and per
 * analysis of a config (in slices). A model with a million modules is checked up to these, never past them. */
export const MODULE_TESTS_PER_HOVER = 200_000;
export const MODULE_TESTS_PER_ANALYSIS = 2_000_000;

export interface Budgeted {
  /** The analysed prefix (the whole text when it fits). */
  text: string;
  /** 1-based line analysis stopped after, when it did. */
  stoppedAt?: number;
}

const lineOf = (text: string, offset: number) => {
  let n = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) n++;
  return n;
};

/** The part of a Python text that is analysed: whole lines up to PYTHON_CHARS. */
export function pythonBudget(text: string, limit = PYTHON_CHARS): Budgeted {
  if (text.length <= limit) return { text };
  const cut = text.lastIndexOf('\n', limit - 1);
  const prefix = cut < 0 ? '' : text.slice(0, cut + 1);
  return { text: prefix, stoppedAt: lineOf(prefix, prefix.length) - 1 };
}

// A line that starts a block node: a list item (any indent) or a top-level key. Cut before one, the part kept
// is whole YAML nodes (a multi-line flow collection or quoted string across the cut is the exception).
const NODE_START = /(?: *- | *-$|[^\s#\-\]},])/my;
const NODE_SEARCH = 64_000;

/** The part of a config text that is analysed: up to the last node start within CONFIG_CHARS. */
export function configBudget(text: string, limit = CONFIG_CHARS): Budgeted {
  if (text.length <= limit) return { text };
  let cut = -1;
  for (
    let nl = text.lastIndexOf('\n', limit - 1);
    nl >= 0 && nl > limit - NODE_SEARCH;
    nl = text.lastIndexOf('\n', nl - 1)
  ) {
    NODE_START.lastIndex = nl + 1;
    if (NODE_START.test(text)) {
      cut = nl;
      break;
    }
  }
  // No node starts near the limit (one huge line or scalar): whole lines, whatever they hold.
  if (cut < 0) cut = text.lastIndexOf('\n', limit - 1);
  const prefix = cut < 0 ? '' : text.slice(0, cut + 1);
  return { text: prefix, stoppedAt: lineOf(prefix, prefix.length) - 1 };
}

/** The information finding at the end of the analysed part. */
export function sizeFinding(text: string, stoppedAtLine: number, what: string): Finding {
  let start = 0;
  for (let n = 1; n < stoppedAtLine; n++) start = text.indexOf('\n', start) + 1;
  const end = Math.max(start + 1, text.indexOf('\n', start) < 0 ? text.length : text.indexOf('\n', start));
  return {
    code: SIZE_CODE,
    severity: 'information',
    start,
    end: Math.min(end, text.length),
    message: `Analysis stopped at line ${stoppedAtLine} because of the document's size (${what}); nothing after it is checked.`,
  };
}
