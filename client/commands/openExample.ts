// QAT: Open an Example — the walkthrough's example step: a copy of one of the examples shipped with the extension
// (examples/digits: a small CNN that quantizes cleanly; examples/cifar: ResNet-18 and MobileNetV2 on 32×32×3,
// whose 4-bit per-tensor config loses accuracy; examples/tinylm: a Llama-style language model with torchao's QAT
// API) in a folder the user picks, then opened with its config in an
// editor and the walkthrough beside it. A workspace that already is that example opens its config instead.
import { cp, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import * as vscode from 'vscode';
import { expectExample } from '../onboarding/walkthrough';

export interface Example {
  name: 'digits' | 'cifar' | 'tinylm';
  label: string;
  detail: string;
  /** The config the example opens on. */
  config: string;
}

export const EXAMPLES: Example[] = [
  {
    name: 'digits',
    label: 'digits: a small CNN on 8×8 digits',
    detail: 'Four layers, trains in seconds; INT8 loses nothing. The place to see every view.',
    config: 'digits.qat.yaml',
  },
  {
    name: 'cifar',
    label: 'cifar: ResNet-18 and MobileNetV2 on 32×32×3 images',
    detail:
      'Real-size models; 4-bit per-tensor weights break MobileNetV2 (depthwise convs): compare, apply the fix, get the accuracy back.',
    config: 'mobilenetv2.qat.yaml',
  },
  {
    name: 'tinylm',
    label: "tinylm: a Llama-style language model with torchao's QAT API",
    detail:
      'Trained from scratch on Python’s documentation topics in a few minutes; int8 activations and int4 grouped weights (8da4w), perplexity FP32 vs PTQ vs QAT.',
    config: 'tinylm.qat.yaml',
  },
];

export interface OpenExampleOptions {
  name?: Example['name'];
  /** Folder the example's folder is made in; asked for when left out. */
  parent?: string;
  /** False: copy only (tests). */
  open?: boolean;
}

const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  );

/** A folder name under `parent` not taken yet: `qat-example-<name>`, then `-2`, `-3`, ... */
async function freeFolder(parent: string, name: string): Promise<string> {
  const taken = new Set(await readdir(parent).catch(() => [] as string[]));
  for (let i = 1; ; i++) {
    const candidate = `qat-example-${name}${i === 1 ? '' : `-${i}`}`;
    if (!taken.has(candidate)) return path.join(parent, candidate);
  }
}

export function openExample(context: vscode.ExtensionContext) {
  const extensionPath = context.extensionPath;
  return async (optionsArg?: OpenExampleOptions): Promise<string | undefined> => {
    const options = optionsArg && typeof optionsArg === 'object' && !Array.isArray(optionsArg) ? optionsArg : {};
    const example =
      EXAMPLES.find((e) => e.name === options.name) ??
      (await vscode.window.showQuickPick(
        EXAMPLES.map((e) => ({ ...e, description: `examples/${e.name}` })),
        { title: 'QAT: Open an Example', placeHolder: 'Which example?', ignoreFocusOut: true },
      ));
    if (!example) return undefined;
    // Already open (e.g. the repository's examples folder): open its config.
    for (const f of vscode.workspace.workspaceFolders ?? []) {
      const config = path.join(f.uri.fsPath, example.config);
      if (await exists(config)) {
        if (options.open !== false) await vscode.window.showTextDocument(vscode.Uri.file(config), { preview: false });
        return f.uri.fsPath;
      }
    }
    let parent = options.parent;
    if (!parent) {
      const picked = await vscode.window.showOpenDialog({
        canSelectFolders: true,
        canSelectFiles: false,
        openLabel: `Copy the ${example.name} example here`,
        title: 'QAT: Open an Example',
      });
      parent = picked?.[0]?.fsPath;
      if (!parent) return undefined;
    }
    const source = path.join(extensionPath, 'examples', example.name);
    if (!(await exists(source))) {
      void vscode.window.showErrorMessage(`The ${example.name} example is not in this installation (${source}).`);
      return undefined;
    }
    await mkdir(parent, { recursive: true });
    const dest = await freeFolder(parent, example.name);
    // Into a temporary name first, so a failed copy leaves no half example behind.
    const tmp = `${dest}.partial`;
    try {
      await cp(source, tmp, { recursive: true, filter: (src) => !/[/\\](out|__pycache__)$/.test(src) });
      await rename(tmp, dest);
    } catch (err) {
      await rm(tmp, { recursive: true, force: true });
      void vscode.window.showErrorMessage(`Could not copy the example to ${dest}: ${(err as Error).message}`);
      return undefined;
    }
    if (options.open !== false) {
      // The window that opens the folder opens the config and continues the walkthrough (onboarding/walkthrough.ts).
      await expectExample(context, { folder: dest, config: example.config });
      await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(dest));
    }
    return dest;
  };
}
