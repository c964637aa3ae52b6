// Which QAT config applies to a Python script, and the effective qconfig of a module under it. A config
// applies to the scripts in its folder: first the one its `model.entry` names, else any script there (the
// training script beside it). Overrides resolve as the kernel's qconfig.plan does: the first override whose
// `match` fullmatches the module path or a parent path wins, its activation/weight keys replacing the
// global ones key by key.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseDocument } from 'yaml';
import { LIMITS, readWorkspaceFileSync } from '../../common/workspaceFile';
import { compilePython } from '../util/pyRegex';
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

const cache = new Map<string, { mtimeMs: number; data?: ConfigData }>();

function readConfig(file: string, open: OpenText): ConfigData | undefined {
  const text = open(pathToFileURL(file).href);
  if (text !== undefined) return parseData(text);
  let stat;
  try {
    stat = statSync(file);
  } catch {
    return undefined;
  }
  const hit = cache.get(file);
  if (hit?.mtimeMs === stat.mtimeMs) return hit.data;
  let data: ConfigData | undefined;
  try {
    data = parseData(readWorkspaceFileSync(file, LIMITS.config));
  } catch {
    data = undefined;
  }
  cache.set(file, { mtimeMs: stat.mtimeMs, data });
  return data;
}

function parseData(text: string): ConfigData | undefined {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) return undefined;
  const data = doc.toJS() as unknown;
  return data && typeof data === 'object' && !Array.isArray(data) ? (data as ConfigData) : undefined;
}

export function configForScript(scriptUri: string, open: OpenText = () => undefined): ScriptConfig | undefined {
  if (!scriptUri.startsWith('file:')) return undefined;
  let script: string;
  try {
    script = fileURLToPath(scriptUri);
  } catch {
    return undefined;
  }
  const dir = path.dirname(script);
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((n) => /\.qat\.ya?ml$/i.test(n))
      .sort();
  } catch {
    return undefined;
  }
  const configs = names.flatMap((n) => {
    const file = path.join(dir, n);
    const data = readConfig(file, open);
    return data ? [{ file, data }] : [];
  });
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
  for (const [index, o] of (data.overrides ?? []).entries()) {
    if (typeof o?.match !== 'string') continue;
    const compiled = compilePython(o.match);
    if (compiled.ok !== true || !candidates.some((c) => compiled.regex.test(c))) continue;
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

/** Module paths an attribute name can stand for: itself at the top, or any nested module of that name. */
export function modulePathsFor(attribute: string, model?: ModelKnowledge): string[] {
  if (!model) return [attribute];
  const exact = model.modules.filter((m) => m.path === attribute).map((m) => m.path);
  if (exact.length) return exact;
  return model.modules.filter((m) => m.path.endsWith(`.${attribute}`)).map((m) => m.path);
}
