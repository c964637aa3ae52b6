// Edit distance for "did you mean" suggestions, bounded: a model can have hundreds of thousands of module paths,
// and a suggestion is worth a few milliseconds of a diagnostics pass, not seconds.
export function levenshtein(a: string, b: string): number {
  return boundedLevenshtein(a, b, Infinity);
}

/** The edit distance of a and b, or max + 1 as soon as it is known to exceed max. */
export function boundedLevenshtein(a: string, b: string, max: number): number {
  if (a === b) return 0;
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (row[j] < best) best = row[j];
    }
    if (best > max) return max + 1;
    prev = row;
  }
  return prev[b.length];
}

/** Character comparisons one `closest` call may spend (a few milliseconds); past it, the best so far. */
export const CLOSEST_BUDGET = 2_000_000;

/** The closest candidate, if it is close enough to be a plausible typo (case-insensitive). */
export function closest(word: string, candidates: Iterable<string>, budget = CLOSEST_BUDGET): string | undefined {
  let best: string | undefined;
  const w = word.toLowerCase();
  const limit = Math.max(2, Math.floor(word.length / 3));
  let bestDistance = limit + 1;
  let spent = 0;
  for (const c of candidates) {
    if (Math.abs(c.length - w.length) >= bestDistance) continue;
    spent += (w.length + 1) * (c.length + 1);
    const d = boundedLevenshtein(w, c.toLowerCase(), bestDistance - 1);
    if (d < bestDistance) [best, bestDistance] = [c, d];
    if (bestDistance === 0 || spent > budget) break;
  }
  return best;
}
