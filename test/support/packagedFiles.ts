// What the .vsix must hold for the installed extension to work: every file package.json names (icons, the
// activity-bar icon, walkthrough media and the images those pages link, schemas, grammars, the entry point),
// and the files the code opens at run time from the extension's folder.
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** Files the extension opens from its own folder at run time, with where each is opened. */
export const RUNTIME_FILES: Record<string, string> = {
  'out/server/server.js': 'client/languageClient.ts: the language server',
  'out/server/graphWorker.js': 'server/server.ts: the worker indexing big exported graphs',
  'out/client/slimWorker.js': 'client/editors/graphPanel.ts: the ONNX slimming worker',
  'out/webview/main.js': 'client/editors/graphPanel.ts: the graph page',
  'out/webview/ui.js': 'client/editors/graphPanel.ts: the page toolkit',
  'python-helpers/qat_kernel/__main__.py': 'client/kernel/kernel.ts: the kernel',
  'python-helpers/requirements.txt': 'client/commands/createKernelEnv.ts: the pinned requirements',
  'protocol/kernel-rpc.schema.json': 'client/kernel/kernel.ts: QAT_STUDIO_PROTOCOL_DIR',
  'protocol/qat-config.schema.json': 'client/kernel/kernel.ts: QAT_STUDIO_PROTOCOL_DIR',
  'examples/digits/digits.qat.yaml': 'client/commands/openExample.ts',
  'examples/cifar/resnet18.qat.yaml': 'client/commands/openExample.ts',
};

const FILE = /^(\.\/)?[\w@-]+(\/[\w.@-]+)*\.(svg|png|md|json|js|gif|jpe?g|webp)$/;

function* strings(node: unknown, at: string): Generator<[string, string]> {
  if (typeof node === 'string') {
    if (FILE.test(node)) yield [at, node.replace(/^\.\//, '')];
  } else if (Array.isArray(node)) {
    for (const [i, v] of node.entries()) yield* strings(v, `${at}[${i}]`);
  } else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) yield* strings(v, at ? `${at}.${k}` : k);
  }
}

/** file -> where package.json (or a walkthrough page it names) refers to it. */
export function manifestFiles(root: string): Map<string, string> {
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as Record<string, unknown>;
  const found = new Map<string, string>();
  for (const [at, file] of strings({ icon: manifest.icon, main: manifest.main, contributes: manifest.contributes }, ''))
    found.set(file, at);
  for (const [file] of [...found]) {
    if (!file.endsWith('.md')) continue;
    // A walkthrough page's own images and links resolve next to it.
    for (const m of readFileSync(path.join(root, file), 'utf8').matchAll(/\]\(([^)\s#]+)\)/g)) {
      if (/^[a-z]+:/i.test(m[1])) continue;
      found.set(path.posix.join(path.posix.dirname(file), m[1]), file);
    }
  }
  return found;
}

/** Every file the installed extension needs, with why; `listed` says which ones a package holds. */
export function missingFromPackage(root: string, listed: Set<string>): string[] {
  const needed = new Map([...manifestFiles(root), ...Object.entries(RUNTIME_FILES)]);
  return [...needed].filter(([file]) => !listed.has(file)).map(([file, why]) => `${file} (${why})`);
}
