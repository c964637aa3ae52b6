// Which QAT config applies to a Python script, and the effective qconfig of a module under it. A config
// applies to the scripts in its folder: first the one its `model.entry` names, else any script there (the
// training script beside it). Overrides resolve as the kernel's qconfig.plan does: the first override whose
// `match` fullmatches the module path or a parent path wins, its activation/weight keys replacing the
// global ones key by key.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Document } from 'yaml';
import { LIMITS, readWorkspaceFileSync } from '../../common/workspaceFile';
import { configBudget } from '../util/budget';
import { compilePython, type LinearRegex } from '../util/pyRegex';
import { runAll, runSliced } from '../util/slices';
import { parseSteps, parsedConfigSteps } from './configDiagnostics';
import { modelIndex, type ModelKnowledge } from './modelIndex';

type Spec = Record<string, unknown>;
export interface ConfigData {
  model?: { entry?: string };
  flow?: string;
  backend?: string;
  qconfig?: { activation?: Spec; weight?: Spec };
  overrides?: Array<{ match?: string; precision?: string; activation?: Spec; weight?: Spec }>;
}

export interface ScriptConfig {
  uri: string;
  file: string;
  data: ConfigData;
  model?: ModelKnowledge;
}

export interface EffectiveQConfig {
  precision: string;
  /** Index and pattern of the override that decided it; undefined: the global qconfig. */
  override?: { index: number; match: string };
  activation?: Spec;
  weight?: Spec;
}

/** Text of open documents by URI, so unsaved config edits count. */
export type OpenText = (uri: string) => string | undefined;

// Each config is parsed once per change, as much of it as the document analysis checks (util/budget.ts): an open
// config's parse is the one its diagnostics left (parsedConfig), a closed one's is kept until its file changes.
// Its override patterns are compiled once per parse. Hover and semantic tokens ask per request and per token.
const onDisk = new Map<string, { key: string; data?: ConfigData }>();
const fromParse = new WeakMap<Document.Parsed, ConfigData | null>();
const compiledOverrides = new WeakMap<ConfigData, Array<LinearRegex | undefined>>();
const MAX_ON_DISK = 64;
const MAX_CONFIGS_PER_FOLDER = 16;

function* readConfig(file: string, open: OpenText): Generator<void, ConfigData | undefined> {
  const uri = pathToFileURL(file).href;
  const text = open(uri);
  if (text !== undefined) return dataOf(yield* parsedConfigSteps(uri, text));
  let stat;
  try {
    stat = statSync(file);
  } catch {
    return undefined;
  }
  const key = `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
  const hit = onDisk.get(file);
  if (hit?.key === key) return hit.data;
  let content: string | undefined;
  try {
    content = readWorkspaceFileSync(file, LIMITS.config);
  } catch {
    content = undefined; // missing, not a regular file or over the limit: no config
  }
  const data = content === undefined ? undefined : dataOf(yield* parseSteps(configBudget(content).text));
  onDisk.delete(file);
  onDisk.set(file, { key, data });
  if (onDisk.size > MAX_ON_DISK) onDisk.delete(onDisk.keys().next().value!);
  return data;
}

function dataOf(doc: Document.Parsed): ConfigData | undefined {
  let data = fromParse.get(doc);
  if (data === undefined) {
    data = null;
    if (doc.errors.length === 0) {
      try {
        const js = doc.toJS() as unknown;
        if (js && typeof js === 'object' && !Array.isArray(js)) data = js as ConfigData;
      } catch {
        data = null; // an alias bomb: yaml refuses to expand it (the config's diagnostics say so)
      }
    }
    fromParse.set(doc, data);
  }
  return data ?? undefined;
}

/** The compiled `match` of each override (undefined where it does not compile), once per parse. */
function overridePatterns(data: ConfigData): Array<LinearRegex | undefined> {
  let compiled = compiledOverrides.get(data);
  if (!compiled) {
    compiled = (Array.isArray(data.overrides) ? data.overrides : []).map((o) => {
      if (typeof o?.match !== 'string') return undefined;
      const c = compilePython(o.match);
      return c.ok === true ? c.regex : undefined;
    });
    compiledOverrides.set(data, compiled);
  }
  return compiled;
}

const listings = new Map<string, { mtimeMs: number; names: string[] }>();

/** The config files in a folder, listed again only when the folder changes. */
function configNames(dir: string): string[] | undefined {
  try {
    const { mtimeMs } = statSync(dir);
    const hit = listings.get(dir);
    if (hit?.mtimeMs === mtimeMs) return hit.names;
    const names = readdirSync(dir)
      .filter((n) => /\.qat\.ya?ml$/i.test(n))
      .sort();
    listings.delete(dir);
    listings.set(dir, { mtimeMs, names });
    if (listings.size > MAX_ON_DISK) listings.delete(listings.keys().next().value!);
    return names;
  } catch {
    return undefined;
  }
}

export function configForScript(scriptUri: string, open: OpenText = () => undefined): ScriptConfig | undefined {
  return runAll(scriptConfigSteps(scriptUri, open));
}

/** Parses what configForScript needs in slices (leaving the parse cached), so a request handler can await it
 * while other requests are answered. */
export function prepareScriptConfig(scriptUri: string, open: OpenText): Promise<unknown> {
  const run = () => runSliced(scriptConfigSteps(scriptUri, open), () => false);
  // One parse at a time per script (a hover right after the document opened waits for the one its
  // diagnostics started); the pass after it finds everything cached.
  const running = inFlight.get(scriptUri);
  if (running) return running.then(run);
  const started = run().finally(() => inFlight.delete(scriptUri));
  inFlight.set(scriptUri, started);
  return started;
}

const inFlight = new Map<string, Promise<unknown>>();

function* scriptConfigSteps(scriptUri: string, open: OpenText): Generator<void, ScriptConfig | undefined> {
  if (!scriptUri.startsWith('file:')) return undefined;
  let script: string;
  try {
    script = fileURLToPath(scriptUri);
  } catch {
    return undefined;
  }
  const dir = path.dirname(script);
  const names = configNames(dir);
  if (!names) return undefined;
  const configs: Array<{ file: string; data: ConfigData }> = [];
  // A folder of hundreds of configs: the first MAX_CONFIGS_PER_FOLDER by name are considered.
  for (const n of names.slice(0, MAX_CONFIGS_PER_FOLDER)) {
    const file = path.join(dir, n);
    const data = yield* readConfig(file, open);
    if (data) configs.push({ file, data });
  }
  const own = configs.find((c) => String(c.data.model?.entry ?? '').split(':')[0] === path.basename(script));
  const chosen = own ?? configs[0];
  if (!chosen) return undefined;
  const uri = pathToFileURL(chosen.file).href;
  return { uri, file: chosen.file, data: chosen.data, model: modelIndex.forConfig(uri) };
}

export function effectiveQConfig(data: ConfigData, modulePath: string): EffectiveQConfig {
  const parts = modulePath.split('.');
  const candidates = parts.map((_, i) => parts.slice(0, parts.length - i).join('.'));
  const global = data.qconfig ?? {};
  const patterns = overridePatterns(data);
  for (const [index, o] of (Array.isArray(data.overrides) ? data.overrides : []).entries()) {
    const regex = patterns[index];
    if (!regex || typeof o?.match !== 'string' || !candidates.some((c) => regex.test(c))) continue;
    const precision = o.precision ?? 'int8';
    const override = { index, match: o.match };
    if (precision !== 'int8') return { precision, override };
    return {
      precision,
      override,
      activation: { ...(global.activation ?? {}), ...(o.activation ?? {}) },
      weight: { ...(global.weight ?? {}), ...(o.weight ?? {}) },
    };
  }
  return { precision: 'int8', activation: global.activation ?? {}, weight: global.weight ?? {} };
}
