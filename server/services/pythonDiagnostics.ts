// Diagnostics for Python QAT scripts, from the @lezer/python tree (pure JS, no Python needed).
// Trees are kept per document so an edit re-parses only around the change (lezer's tree fragments); the
// analysis keeps each unchanged def's and class's findings (analysis/document.ts).
import { TreeFragment, type Tree } from '@lezer/common';
import { parser } from '@lezer/python';
import { analysisSteps, analyzePython, type Analysis } from '../analysis/document';
import { pythonDocumentRules, pythonRules } from '../rules/python';
import type { Finding } from '../rules/types';
import { nextTurn, runSliced } from '../util/slices';

const MAX_TREES = 32;
const trees = new Map<string, { text: string; tree: Tree }>();

/** Parses `text`, reusing the previous tree of the same document (`key`) outside the changed span. */
export function parsePython(text: string, key?: string): Tree {
  const prev = key ? trees.get(key) : undefined;
  let tree: Tree;
  if (!prev) tree = parser.parse(text);
  else if (prev.text === text) tree = prev.tree;
  else {
    const { start, endA, endB } = changedSpan(prev.text, text);
    const fragments = TreeFragment.applyChanges(TreeFragment.addTree(prev.tree), [
      { fromA: start, toA: endA, fromB: start, toB: endB },
    ]);
    tree = parser.parse(text, fragments);
  }
  if (key) {
    trees.delete(key);
    trees.set(key, { text, tree });
    if (trees.size > MAX_TREES) trees.delete(trees.keys().next().value!);
  }
  return tree;
}

/** The span where two texts differ: compared in chunks (native string equality), then char by char. */
export function changedSpan(old: string, text: string): { start: number; endA: number; endB: number } {
  const CHUNK = 4096;
  const max = Math.min(old.length, text.length);
  let start = 0;
  while (start + CHUNK <= max && old.slice(start, start + CHUNK) === text.slice(start, start + CHUNK)) start += CHUNK;
  while (start < max && old.charCodeAt(start) === text.charCodeAt(start)) start++;
  let [endA, endB] = [old.length, text.length];
  while (
    endA - CHUNK >= start &&
    endB - CHUNK >= start &&
    old.slice(endA - CHUNK, endA) === text.slice(endB - CHUNK, endB)
  )
    [endA, endB] = [endA - CHUNK, endB - CHUNK];
  while (endA > start && endB > start && old.charCodeAt(endA - 1) === text.charCodeAt(endB - 1))
    [endA, endB] = [endA - 1, endB - 1];
  return { start, endA, endB };
}

/**
 * Parses like parsePython, in slices of about `sliceMs`, yielding to the event loop between them so requests
 * are answered meanwhile; gives up (undefined) as soon as `stale()` says a newer version exists.
 */
export async function parsePythonSliced(
  text: string,
  key: string,
  stale: () => boolean,
  sliceMs = 20,
): Promise<Tree | undefined> {
  const prev = trees.get(key);
  if (prev?.text === text) return prev.tree;
  let fragments: readonly TreeFragment[] | undefined;
  if (prev) {
    const { start, endA, endB } = changedSpan(prev.text, text);
    fragments = TreeFragment.applyChanges(TreeFragment.addTree(prev.tree), [
      { fromA: start, toA: endA, fromB: start, toB: endB },
    ]);
  }
  const parse = parser.startParse(text, fragments);
  for (;;) {
    const until = performance.now() + sliceMs;
    let tree: Tree | null = null;
    while (!tree && performance.now() < until) tree = parse.advance();
    if (tree) {
      trees.delete(key);
      trees.set(key, { text, tree });
      if (trees.size > MAX_TREES) trees.delete(trees.keys().next().value!);
      return tree;
    }
    await nextTurn();
    if (stale()) return undefined;
  }
}

export function forgetPython(key: string): void {
  trees.delete(key);
}

/** 1-based line of an offset, with the line starts indexed once per text. */
function lineIndex(text: string): (offset: number) => number {
  let starts: number[] | undefined;
  return (offset) => {
    if (!starts) {
      starts = [0];
      for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
    }
    let [lo, hi] = [0, starts.length - 1];
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

export function analyzePythonText(text: string, key?: string): Analysis {
  return analyzePython(text, parsePython(text, key), pythonRules, pythonDocumentRules, lineIndex(text));
}

export function pythonFindings(text: string, key?: string): Finding[] {
  return analyzePythonText(text, key).findings;
}

/**
 * analyzePythonText in slices of about `sliceMs` (parse, then unit by unit), yielding to the event loop between
 * them; undefined as soon as `stale()` says a newer version exists. Its unit results stay cached, so the next
 * analyzePythonText of the same text is quick.
 */
export async function analyzePythonSliced(
  text: string,
  key: string,
  stale: () => boolean,
  sliceMs = 20,
): Promise<Analysis | undefined> {
  const tree = await parsePythonSliced(text, key, stale, sliceMs);
  if (!tree) return undefined;
  return runSliced(analysisSteps(text, tree, pythonRules, pythonDocumentRules, lineIndex(text)), stale, sliceMs);
}
