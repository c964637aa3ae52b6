// Diagnostics for a QAT config YAML: syntax errors, JSON Schema errors and the semantic rules. The analysis is
// a step generator (util/slices.ts): the server runs it in slices so a huge config never blocks other
// requests, tests and code actions run it at once. A huge config is analysed up to a budget (util/budget.ts).
import { fileURLToPath } from 'node:url';
import {
  Composer,
  Lexer,
  Parser,
  YAMLParseError,
  isMap,
  isScalar,
  isSeq,
  type CST,
  type Document,
  type Node,
} from 'yaml';

import { makeContext, replaceFix } from '../rules/yaml/context';
import { yamlRules } from '../rules/yaml';
import { missingKey } from '../rules/yaml/missingKey';
import { unknownKey } from '../rules/yaml/unknownKey';
import type { Finding } from '../rules/types';
import type { ModelKnowledge } from './modelIndex';
import { CONFIG_CHARS, configBudget, MAX_OVERRIDES, sizeFinding } from '../util/budget';
import { closest } from '../util/levenshtein';
import { runAll } from '../util/slices';
import { validateConfigSchema, type SchemaError } from './schema';
import { workspaceFolders } from './workspaceFolders';

export function parseConfig(text: string): Document.Parsed {
  return runAll(parseSteps(text));
}

/** yaml's parseDocument, a step per few hundred lexemes (lexing and the CST are most of the time). */
export function* parseSteps(text: string): Generator<void, Document.Parsed> {
  const parser = new Parser();
  const tokens: CST.Token[] = [];
  let n = 0;
  for (const lexeme of new Lexer().lex(text)) {
    for (const token of parser.next(lexeme)) tokens.push(token);
    if (++n % 256 === 0) yield;
  }
  for (const token of parser.end()) tokens.push(token);
  yield;
  let doc: Document.Parsed | undefined;
  for (const next of new Composer({ prettyErrors: false, uniqueKeys: true }).compose(tokens, true, text.length)) {
    if (!doc) doc = next as Document.Parsed;
    else {
      doc.errors.push(
        new YAMLParseError(
          [next.range[0], next.range[1]],
          'MULTIPLE_DOCS',
          'Source contains multiple documents; please use YAML.parseAllDocuments()',
        ),
      );
      break;
    }
  }
  return doc!;
}

// The last parse of each open config, for hover, symbols and semantic tokens (the analysis leaves it here).
const MAX_PARSED = 32;
const parsed = new Map<string, { text: string; doc: Document.Parsed }>();

function remember(uri: string, text: string, doc: Document.Parsed): void {
  parsed.delete(uri);
  parsed.set(uri, { text, doc });
  if (parsed.size > MAX_PARSED) parsed.delete(parsed.keys().next().value!);
}

/** The parsed analysed part of an open config (its budget), reusing the last parse of the same text. */
export function parsedConfig(uri: string, text: string): Document.Parsed {
  return runAll(parsedConfigSteps(uri, text));
}

/** parsedConfig as steps: a request handler runs them in slices before a service asks for the parse. */
export function* parsedConfigSteps(uri: string, text: string): Generator<void, Document.Parsed> {
  const part = configBudget(text).text;
  const last = parsed.get(uri);
  if (last?.text === part) return last.doc;
  const doc = yield* parseSteps(part);
  remember(uri, part, doc);
  return doc;
}

export function forgetConfig(uri: string): void {
  parsed.delete(uri);
}

export function configFindings(text: string, model?: ModelKnowledge, uri?: string): Finding[] {
  return runAll(configSteps(text, model, uri));
}

function filePath(uri: string | undefined): string | undefined {
  if (!uri?.startsWith('file:')) return undefined;
  try {
    return fileURLToPath(uri);
  } catch {
    return undefined;
  }
}

/** configFindings as steps; with `uri`, the parse is kept for parsedConfig. */
export function* configSteps(text: string, model?: ModelKnowledge, uri?: string): Generator<void, Finding[]> {
  const budget = configBudget(text);
  const findings = yield* budgetedSteps(budget.text, model, uri);
  if (budget.stoppedAt !== undefined)
    findings.push(
      sizeFinding(
        text,
        budget.stoppedAt,
        `${Math.round(text.length / 1024)} KB; the first ${CONFIG_CHARS / 1000} KB is checked`,
      ),
    );
  return findings;
}

function* budgetedSteps(text: string, model?: ModelKnowledge, uri?: string): Generator<void, Finding[]> {
  if (!text) return [];
  const doc = yield* parseSteps(text);
  if (uri) remember(uri, text, doc);
  const findings: Finding[] = doc.errors.map((e) => ({
    code: 'YAML',
    severity: 'error' as const,
    start: e.pos[0],
    end: Math.max(e.pos[1], e.pos[0] + 1),
    message: e.message.split('\n')[0],
  }));
  if (doc.errors.length > 0) return findings;
  yield;
  let data: unknown;
  try {
    data = doc.toJS();
  } catch (err) {
    // An alias bomb or similar: yaml refuses to expand it, and so do we.
    return [
      { code: 'YAML', severity: 'error', start: 0, end: Math.min(text.length, 1), message: (err as Error).message },
    ];
  }
  yield;
  if (!validateConfigSchema(data)) {
    for (const err of oneOfBranchErrors(validateConfigSchema.errors ?? [])) {
      const f = schemaFinding(doc, text, err);
      if (f) findings.push(f);
      yield;
    }
  }
  const configFile = filePath(uri);
  const ctx = makeContext(text, doc, model, configFile ? { configFile, folders: workspaceFolders() } : undefined);
  for (const rule of yamlRules) {
    yield;
    const found = rule(ctx);
    findings.push(...(Array.isArray(found) ? found : yield* found));
  }
  const overrides = (data as { overrides?: unknown } | null)?.overrides;
  if (Array.isArray(overrides) && overrides.length > MAX_OVERRIDES) {
    const root = doc.contents;
    const seq = isMap(root) ? root.get('overrides', true) : undefined;
    const last = isSeq(seq) ? (seq.items[MAX_OVERRIDES - 1] as Node | undefined)?.range : undefined;
    const line = last ? text.slice(0, last[1]).split('\n').length : 1;
    findings.push(
      sizeFinding(text, line, `${overrides.length} overrides; the override checks take the first ${MAX_OVERRIDES}`),
    );
  }
  return findings;
}

/** A value that fits none of a oneOf's (or anyOf's) forms gets errors from every branch. The branch that went
 * deepest into the value is the form the user meant (model.example_input given as a map, with a bad dtype inside):
 * only its errors are shown. Else a branch of the value's type is (torchao.group_size: 0 is a bad integer, not a
 * bad per_channel): the branches that failed on the type are left out. Where no branch got past the value's type,
 * the type errors become one ("must be array or object"). An error reached through a $ref names the definition,
 * not the branch, in its schemaPath. */
export function oneOfBranchErrors(errors: SchemaError[]): SchemaError[] {
  const depth = (e: SchemaError) => e.instancePath.split('/').length;
  let kept = errors;
  for (const oneOf of errors.filter((e) => e.keyword === 'oneOf' || e.keyword === 'anyOf')) {
    const at = oneOf.instancePath;
    const branchOf = (e: SchemaError) =>
      e.schemaPath.startsWith(`${oneOf.schemaPath}/`)
        ? e.schemaPath.slice(oneOf.schemaPath.length + 1).split('/')[0]
        : undefined;
    const inside = kept.filter((e) => e !== oneOf && (e.instancePath === at || e.instancePath.startsWith(`${at}/`)));
    if (!inside.length) continue;
    const deepest = Math.max(...inside.map(depth));
    if (deepest > depth(oneOf)) {
      const best = inside.filter((e) => depth(e) === deepest).find((e) => branchOf(e) !== undefined);
      const other = (e: SchemaError) =>
        branchOf(e) !== undefined && (best ? branchOf(e) !== branchOf(best) : depth(e) < deepest);
      kept = kept.filter((e) => !inside.includes(e) || !other(e));
      continue;
    }
    const branches = new Set(inside.map(branchOf).filter((b) => b !== undefined));
    const typeFailed = new Set(inside.filter((e) => e.keyword === 'type').map(branchOf));
    if (typeFailed.size && [...branches].some((b) => !typeFailed.has(b))) {
      kept = kept.filter((e) => !inside.includes(e) || !typeFailed.has(branchOf(e)));
      continue;
    }
    const types = [...new Set(inside.filter((e) => e.keyword === 'type').map((e) => String(e.params.type)))];
    if (!types.length) continue;
    const merged = { ...inside[0], params: { type: types.join(',') }, message: `must be ${types.join(' or ')}` };
    kept = [...kept.filter((e) => !inside.includes(e) || e.keyword !== 'type'), merged];
  }
  return kept;
}

function schemaFinding(doc: Document.Parsed, text: string, err: SchemaError): Finding | undefined {
  const segments = err.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const path = segments.map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  if (err.keyword === 'additionalProperties') return unknownKey(doc, path, err);
  if (err.keyword === 'required') return missingKey(doc, text, path, err);
  // Observer names get QCFG009, which knows the flow.
  if (err.keyword === 'enum' && segments[segments.length - 1] === 'observer' && segments.length >= 3) return undefined;
  // oneOf and anyOf repeat what their branches already said; so does if (qconfig, unless flow: torchao).
  if (err.keyword === 'oneOf' || err.keyword === 'anyOf' || err.keyword === 'if') return undefined;
  const node = doc.getIn(path, true) as Node | undefined;
  const range = node?.range ?? doc.contents?.range ?? [0, 1];
  const finding: Finding = {
    code: 'QCFG000',
    severity: 'error',
    start: range[0],
    end: Math.max(range[1], range[0] + 1),
    message: `${segments.join('.') || 'config'} ${err.message ?? 'is invalid'}.`,
  };
  if (err.keyword === 'enum') {
    const allowed = (err.params.allowedValues as unknown[]).map(String);
    const value = isScalar(node) ? String(node.value) : '';
    const suggestion = closest(value, allowed);
    finding.message = `${segments.join('.')} must be one of: ${allowed.join(', ')}.${suggestion ? ` Did you mean '${suggestion}'?` : ''}`;
    if (suggestion && isScalar(node))
      finding.fixes = [replaceFix(`Change to '${suggestion}'`, [range[0], range[1]], suggestion, true)];
  } else if (err.keyword === 'const') {
    finding.message = `${segments.join('.')} must be ${JSON.stringify(err.params.allowedValue)}.`;
    if (isScalar(node))
      finding.fixes = [
        replaceFix(
          `Change to ${JSON.stringify(err.params.allowedValue)}`,
          [range[0], range[1]],
          JSON.stringify(err.params.allowedValue),
          true,
        ),
      ];
  }
  return finding;
}

/** A YAML file is a QAT config when named *.qat.yaml, or when it has version and qconfig at top level. */
export function isQatConfig(uri: string, text: string): boolean {
  if (/\.qat\.ya?ml$/i.test(uri)) return true;
  return /^version:\s*1\s*$/m.test(text) && /^qconfig:/m.test(text);
}
