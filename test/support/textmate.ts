// Tokenizes text the way VS Code does: vscode-textmate with the Oniguruma WASM engine, VS Code's own YAML
// and Python grammars (from the code-server install) and our injection grammars from syntaxes/.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import * as oniguruma from 'vscode-oniguruma';
import * as vsctm from 'vscode-textmate';
import { codeServerDir, repoRoot } from './paths';

const builtin = path.join(codeServerDir, 'node_modules', 'code-server', 'lib', 'vscode', 'extensions');

function grammarFiles(): Map<string, string> {
  const files = new Map<string, string>();
  const add = (dir: string) => {
    for (const name of readdirSync(dir).filter((n) => n.endsWith('.tmLanguage.json'))) {
      const file = path.join(dir, name);
      files.set((JSON.parse(readFileSync(file, 'utf8')) as { scopeName: string }).scopeName, file);
    }
  };
  add(path.join(builtin, 'yaml', 'syntaxes'));
  add(path.join(builtin, 'python', 'syntaxes'));
  add(path.join(repoRoot, 'syntaxes'));
  return files;
}

let registry: vsctm.Registry | undefined;

export async function textmateRegistry(): Promise<vsctm.Registry> {
  if (registry) return registry;
  const wasm = readFileSync(path.join(repoRoot, 'node_modules', 'vscode-oniguruma', 'release', 'onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const files = grammarFiles();
  const injections: Record<string, string[]> = {};
  for (const [scope, file] of files) {
    const selector = (JSON.parse(readFileSync(file, 'utf8')) as { injectionSelector?: string }).injectionSelector;
    const base = selector && /^L:(source\.\w+)/.exec(selector)?.[1];
    if (base) (injections[base] ??= []).push(scope);
  }
  registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns: string[]) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s: string) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope) => {
      const file = files.get(scope);
      return file ? vsctm.parseRawGrammar(readFileSync(file, 'utf8'), file) : null;
    },
    getInjections: (scope) => injections[scope],
  });
  return registry;
}

/** Each token of each line as [text, innermost scope]; `only` keeps the tokens whose scopes match it. */
export async function tokenize(scope: string, text: string, only?: RegExp): Promise<Array<[string, string]>> {
  const grammar = await (await textmateRegistry()).loadGrammar(scope);
  if (!grammar) throw new Error(`no grammar for ${scope}`);
  const out: Array<[string, string]> = [];
  let state = vsctm.INITIAL;
  for (const line of text.split('\n')) {
    const result = grammar.tokenizeLine(line, state);
    for (const t of result.tokens) {
      const inner = t.scopes[t.scopes.length - 1];
      if (!only || only.test(inner)) out.push([line.slice(t.startIndex, t.endIndex), inner]);
    }
    state = result.ruleStack;
  }
  return out;
}
