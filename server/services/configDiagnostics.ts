// Diagnostics for a QAT config YAML: syntax errors, JSON Schema errors and the semantic rules.
import { isMap, isScalar, isSeq, parseDocument, type Document, type Node } from 'yaml';
import { makeContext, replaceFix } from '../rules/yaml/context';
import { yamlRules } from '../rules/yaml';
import { missingKey } from '../rules/yaml/missingKey';
import { unknownKey } from '../rules/yaml/unknownKey';
import type { Finding } from '../rules/types';
import type { ModelKnowledge } from './modelIndex';
import { MAX_OVERRIDES, sizeFinding } from '../util/budget';
import { closest } from '../util/levenshtein';
import { validateConfigSchema, type SchemaError } from './schema';

export function parseConfig(text: string): Document.Parsed {
  return parseDocument(text, { prettyErrors: false, uniqueKeys: true });
}

export function configFindings(text: string, model?: ModelKnowledge): Finding[] {
  const doc = parseConfig(text);
  const findings: Finding[] = doc.errors.map((e) => ({
    code: 'YAML',
    severity: 'error' as const,
    start: e.pos[0],
    end: Math.max(e.pos[1], e.pos[0] + 1),
    message: e.message.split('\n')[0],
  }));
  if (doc.errors.length > 0) return findings;
  let data: unknown;
  try {
    data = doc.toJS();
  } catch (err) {
    // An alias bomb or similar: yaml refuses to expand it, and so do we.
    return [
      { code: 'YAML', severity: 'error', start: 0, end: Math.min(text.length, 1), message: (err as Error).message },
    ];
  }
  if (!validateConfigSchema(data)) {
    for (const err of validateConfigSchema.errors ?? []) {
      const f = schemaFinding(doc, text, err);
      if (f) findings.push(f);
    }
  }
  const ctx = makeContext(text, doc, model);
  for (const rule of yamlRules) findings.push(...rule(ctx));
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
  // oneOf repeats what its branches already said.
  if (err.keyword === 'oneOf') return undefined;
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
