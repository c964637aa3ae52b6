// The folders the client opened, as real paths: the kernel imports, loads and writes only inside them (unless the
// machine setting qatStudio.kernel.allowPathsOutsideWorkspace is on), and config diagnostics say so beforehand.
import { fileURLToPath } from 'node:url';
import { realPath } from '../util/insideFolders';

let folders: string[] = [];
let generation = 0;

/** From InitializeParams.workspaceFolders (or rootUri) and each workspace/didChangeWorkspaceFolders. */
export function setWorkspaceFolders(uris: string[]): void {
  folders = uris.flatMap((uri) => {
    if (!uri.startsWith('file:')) return [];
    try {
      return [realPath(fileURLToPath(uri))];
    } catch {
      return [];
    }
  });
  generation++;
}

export const workspaceFolders = (): readonly string[] => folders;
/** Changes whenever the folders do: part of cache keys. */
export const foldersGeneration = (): number => generation;
