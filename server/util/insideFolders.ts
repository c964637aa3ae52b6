// Whether a path lies inside a set of folders, symlinks resolved as far as the path exists (a symlinked model.py
// that leads out of the workspace is outside).
import { realpathSync } from 'node:fs';
import path from 'node:path';

export function realPath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    // Not there (yet): its nearest existing parent decides, so a symlinked folder still counts.
    const parent = path.dirname(p);
    return parent === p ? p : path.join(realPath(parent), path.basename(p));
  }
}

/** `file` (symlinks resolved as far as it exists) lies inside one of `roots`. */
export function isInside(file: string, roots: readonly string[]): boolean {
  const resolved = realPath(file);
  return roots.some((r) => resolved === r || resolved.startsWith(r.endsWith(path.sep) ? r : r + path.sep));
}
