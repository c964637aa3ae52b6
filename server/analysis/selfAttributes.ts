// The `self.<name>` attributes a Python text mentions or assigns, found with one fixed pattern in one pass.
// Checks on a name taken from the document never build a regex from it (no pattern injection, and one
// linear scan per text instead of one per name).
const NAME = '[\\p{L}\\p{N}_]+';

let last: { text: string; assigned: Set<string>; used: Set<string> } | undefined;

function scan(text: string): { assigned: Set<string>; used: Set<string> } {
  if (last?.text === text) return last;
  const assigned = new Set<string>();
  const used = new Set<string>();
  for (const m of text.matchAll(new RegExp(`(?<![\\p{L}\\p{N}_])self\\.(${NAME})(\\s*=)?`, 'gu'))) {
    used.add(m[1]);
    if (m[2]) assigned.add(m[1]);
  }
  last = { text, assigned, used };
  return last;
}

/** Whether the text assigns `self.<name> =` (or compares with `==`, as the old check did). */
export function assignsSelf(text: string, name: string): boolean {
  return scan(text).assigned.has(name);
}

/** Whether the text mentions `self.<name>` as a whole attribute. */
export function mentionsSelf(text: string, name: string): boolean {
  return scan(text).used.has(name);
}
