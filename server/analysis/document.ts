// One analysis per document version: the module's names, one summary per unit (a top-level def or class),
// the document context from them, then one walk per unit that feeds every rule. A unit whose text, the
// module's imports and the context are unchanged is not walked again: its findings are kept (relative to the
// unit) and moved to where it is now. Module-level statements are walked on every edit.
import type { SyntaxNode, Tree } from '@lezer/common';
import { DocContext, type DocFlags } from './context';
import { finalize, remap, segmentDecoder, segmentEncoder, shift, toRelative, type StoredFinding } from './findings';
import { moduleScope, type ModuleScope } from './scope';
import { countExport, summarize, type UnitSummary } from './summaries';
import { definitionOf, nameOf, statements } from './syntax';
import { Walker, type UnitFacts } from './walker';
import type { Finding } from '../rules/types';

export interface Unit {
  id: string;
  node: SyntaxNode;
  from: number;
  text: string;
}

export interface RuleInput {
  text: string;
  tree: Tree;
  facts: UnitFacts;
  ctx: DocContext;
  /** The unit's id ('module' for module-level code) and start. */
  anchor: string;
  base: number;
  isModule: boolean;
}

export type PythonRule = (input: RuleInput) => StoredFinding[];

/** Rules that see every finding of the document at the end (e.g. one hint per file). */
export type DocumentRule = (findings: StoredFinding[]) => StoredFinding[];

const MAX_ENTRIES = 4096;
const MAX_KEY_CHARS = 48 * 1024 * 1024;

/**
 * A bounded cache keyed by long strings (unit texts): two generations, the recent one and the one before;
 * a hit in the old one moves to the recent one, and when the recent one is full the old one is dropped.
 */
class UnitCache<V> {
  private young = new Map<string, V>();
  private old = new Map<string, V>();
  private chars = 0;
  get(key: string): V | undefined {
    const v = this.young.get(key);
    if (v !== undefined) return v;
    const o = this.old.get(key);
    if (o !== undefined) this.set(key, o);
    return o;
  }
  set(key: string, v: V): void {
    if (this.young.size >= MAX_ENTRIES / 2 || this.chars > MAX_KEY_CHARS / 2) {
      this.old = this.young;
      this.young = new Map();
      this.chars = 0;
    }
    if (!this.young.has(key)) this.chars += key.length;
    this.young.set(key, v);
  }
  clear(): void {
    this.young.clear();
    this.old.clear();
    this.chars = 0;
  }
}

const summaryCache = new UnitCache<{ summary: UnitSummary; hash: string }>();
const findingCache = new UnitCache<StoredFinding[]>();

/** For tests and benchmarks that need cold runs. */
export function clearAnalysisCache(): void {
  summaryCache.clear();
  findingCache.clear();
}

/** cyrb53: a fast 53-bit string hash, for fingerprints that stay short. */
export function hash(s: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}

function splitUnits(text: string, script: SyntaxNode): { units: Unit[]; moduleStatements: SyntaxNode[] } {
  const units: Unit[] = [];
  const moduleStatements: SyntaxNode[] = [];
  const seen = new Map<string, number>();
  for (const s of statements(script)) {
    const def = definitionOf(s);
    if (!def) {
      moduleStatements.push(s);
      continue;
    }
    const base = `${def.name === 'ClassDefinition' ? 'class' : 'def'}:${nameOf(text, def)}`;
    const k = seen.get(base) ?? 0;
    seen.set(base, k + 1);
    units.push({ id: `${base}#${k}`, node: s, from: s.from, text: text.slice(s.from, s.to) });
  }
  return { units, moduleStatements };
}

const QUANTIZES = /\b(torchao|torch\.ao\.quantization|torch\.quantization|quantize_pt2e|prepare_qat|prepare_pt2e)\b/;

/**
 * Whether the file may convert a torchao QAT model (QAT017 stays silent then): it says `convert` anywhere (code,
 * strings, comments), uses FromIntXQuantizationAwareTrainingConfig, or has a quantize_ call that may be a PTQ
 * step (more quantize_ calls than QATConfig calls).
 */
function qatConverts(text: string): boolean {
  if (/\bconvert\b|FromIntXQuantizationAwareTrainingConfig|from_intx_quantization_aware_training/i.test(text))
    return true;
  const count = (re: RegExp) => text.match(re)?.length ?? 0;
  return count(/\bquantize_\s*\(/g) > count(/\bQATConfig\s*\(/g);
}

function docFlags(text: string, summaries: UnitSummary[], moduleExports: { strict: number; loose: number }): DocFlags {
  let strict = moduleExports.strict;
  let loose = moduleExports.loose;
  for (const s of summaries) {
    strict += s.exports.strict;
    loose += s.exports.loose;
  }
  return {
    quantizes: QUANTIZES.test(text),
    strictExportOnly: strict > 0 && loose === 0,
    qatConverts: qatConverts(text),
  };
}

export interface Analysis {
  findings: Finding[];
  /** Units walked this time (not reused from the cache), for tests and the benchmark. */
  walked: number;
  units: number;
}

export function analyzePython(
  text: string,
  tree: Tree,
  rules: PythonRule[],
  documentRules: DocumentRule[],
  lineOf: (offset: number) => number,
): Analysis {
  const steps = analysisSteps(text, tree, rules, documentRules, lineOf);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * The analysis as steps: it pauses after each unit, so a caller can spread a huge document over several
 * turns of the event loop (and drop it when stale). Run to the end it is analyzePython.
 */
export function* analysisSteps(
  text: string,
  tree: Tree,
  rules: PythonRule[],
  documentRules: DocumentRule[],
  lineOf: (offset: number) => number,
): Generator<void, Analysis> {
  const script = tree.topNode;
  const { units, moduleStatements } = splitUnits(text, script);
  const module: ModuleScope = moduleScope(text, script);
  const importsFP = hash(module.names.fingerprint() + '|' + module.importAt);

  const summaries: UnitSummary[] = [];
  const jsons: string[] = [];
  for (const u of units) {
    const key = `${importsFP}\u0000${u.text}`;
    let hit = summaryCache.get(key);
    if (!hit) {
      const summary = summarize(text, u.node, u.id, module.names);
      hit = { summary, hash: hash(JSON.stringify(summary)) };
      summaryCache.set(key, hit);
    }
    summaries.push(hit.summary);
    jsons.push(hit.hash);
    yield;
  }
  const moduleExports = countModuleExports(text, moduleStatements, module);
  const flags = docFlags(text, summaries, moduleExports);
  const contextFP = hash(`${importsFP}|${JSON.stringify(flags)}|${jsons.join(',')}`);
  const ctx = new DocContext(module, summaries, flags, contextFP);

  const stored: StoredFinding[] = [];
  let walked = 0;
  for (const u of units) {
    const key = `${contextFP}\u0000${u.text}`;
    let rel = findingCache.get(key);
    if (!rel) {
      walked++;
      const w = new Walker(text, ctx);
      w.walkUnit(u.node);
      const input: RuleInput = { text, tree, facts: w.facts, ctx, anchor: u.id, base: u.from, isModule: false };
      rel = toRelative(
        rules.flatMap((r) => r(input)),
        u.from,
      );
      findingCache.set(key, rel);
    }
    for (const f of rel) stored.push(shift(f, u.from));
    yield;
  }
  // Module-level code: one unit of many statements, stored per statement (see segmentEncoder).
  const segStarts = moduleStatements.map((s) => s.from);
  const moduleKey = `${contextFP}\u0000${moduleStatements.map((s) => text.slice(s.from, s.to)).join('\u0002')}`;
  let moduleFindings = findingCache.get(moduleKey);
  if (!moduleFindings) {
    walked++;
    const w = new Walker(text, ctx);
    w.walkModule(moduleStatements, () => false);
    const input: RuleInput = { text, tree, facts: w.facts, ctx, anchor: 'module', base: 0, isModule: true };
    const encode = segmentEncoder(segStarts);
    moduleFindings = rules.flatMap((r) => r(input)).map((f) => remap(f, encode, true));
    findingCache.set(moduleKey, moduleFindings);
  }
  const decode = segmentDecoder(segStarts);
  for (const f of moduleFindings) stored.push(remap(f, decode, true));

  let all = stored;
  for (const r of documentRules) all = r(all);
  const starts = new Map(units.map((u) => [u.id, u.from]));
  starts.set('module', 0);
  const findings = all.map((f) => finalize(f, (a) => starts.get(a), lineOf));
  return { findings, walked, units: units.length };
}

/** torch.export.export calls at module level, with and without strict=True. */
function countModuleExports(text: string, stmts: SyntaxNode[], module: ModuleScope): { strict: number; loose: number } {
  const out = { strict: 0, loose: 0 };
  for (const s of stmts) {
    if (!text.slice(s.from, s.to).includes('export')) continue;
    s.cursor().iterate((n) => {
      if (n.name === 'CallExpression') countExport(text, n.node, (p) => module.names.qualify(p), out);
    });
  }
  return out;
}
