// The layout block of docs/architecture.md against the tree. A block is a fenced code block of entries, one a
// line: a path (a folder ending in `/`, a file, or a `*` pattern) indented two spaces per level under the entry
// above it, then its description; lines indented past the entries' depth continue the description above.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** Folders that are build output, caches or installed packages, never part of the layout (nor is a folder with a
 * CACHEDIR.TAG, as tools mark their caches). */
export const IGNORED = new Set([
  '.git',
  'node_modules',
  'out',
  'build',
  '.test-artifacts',
  '__pycache__',
  '.pytest_cache',
  '.venv',
  '.ruff_cache',
  '.mypy_cache',
]);

/** How deep an entry may be indented (in columns); a line indented further continues a description. */
const MAX_ENTRY_INDENT = 12;

/** The block's entries as paths relative to the root, folders ending in `/`. */
export function parseLayoutBlock(block: string): string[] {
  const stack: { indent: number; path: string }[] = [];
  const entries: string[] = [];
  for (const line of block.split('\n')) {
    const m = /^( *)(\S+)/.exec(line);
    if (!m || m[1].length > MAX_ENTRY_INDENT) continue;
    const indent = m[1].length;
    while (stack.length && stack[stack.length - 1].indent >= indent) stack.pop();
    const parent = stack.length ? stack[stack.length - 1].path : '';
    const full = parent + m[2];
    entries.push(full);
    if (full.endsWith('/')) stack.push({ indent, path: full });
  }
  return entries;
}

/** The first fenced code block after the heading `## <heading>` in a markdown text. */
export function layoutBlockOf(markdown: string, heading: string): string {
  const section = markdown.split(`\n## ${heading}\n`)[1];
  const block = section ? /```[^\n]*\n([\s\S]*?)\n```/.exec(section.split('\n## ')[0]) : null;
  if (!block) throw new Error(`no code block under "## ${heading}"`);
  return block[1];
}

/** Sub-folders of `dir` (relative to root), each ending in `/`, skipping ignored ones; recursive if asked. */
export function foldersUnder(root: string, dir: string, recursive: boolean): string[] {
  const found: string[] = [];
  for (const e of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    if (!e.isDirectory() || IGNORED.has(e.name)) continue;
    const rel = `${dir ? `${dir}/` : ''}${e.name}`;
    if (existsSync(path.join(root, rel, 'CACHEDIR.TAG'))) continue;
    found.push(`${rel}/`);
    if (recursive) found.push(...foldersUnder(root, rel, true));
  }
  return found;
}

function exists(root: string, entry: string): boolean {
  if (!entry.includes('*')) return existsSync(path.join(root, entry));
  const dir = path.posix.dirname(entry);
  const pattern = new RegExp(
    `^${path.posix
      .basename(entry)
      .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')}$`,
  );
  return existsSync(path.join(root, dir)) && readdirSync(path.join(root, dir)).some((f) => pattern.test(f));
}

/**
 * What is wrong between a layout block and the tree at `root`: entries naming nothing, and folders that must be
 * named (every top-level folder; every folder, at any depth, under each of `covered`) but are not.
 */
export function layoutMismatches(block: string, root: string, covered: string[]): string[] {
  const entries = parseLayoutBlock(block);
  const named = new Set(entries.filter((e) => e.endsWith('/')));
  // `a/b/` written on one line names `a/` too.
  for (const e of [...named]) {
    const parts = e.split('/').slice(0, -1);
    for (let i = 1; i < parts.length; i++) named.add(`${parts.slice(0, i).join('/')}/`);
  }
  const problems = entries.filter((e) => !exists(root, e)).map((e) => `named but not in the tree: ${e}`);
  const required = [
    ...foldersUnder(root, '', false),
    ...covered.filter((c) => existsSync(path.join(root, c))).flatMap((c) => foldersUnder(root, c, true)),
  ];
  for (const folder of required) if (!named.has(folder)) problems.push(`in the tree but not named: ${folder}`);
  return problems;
}
