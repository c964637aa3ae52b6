// Diagnostics for a QAT config YAML: syntax errors, JSON Schema errors and the semantic rules.
import { isMap, isScalar, parseDocument, type Document, type Node } from 'yaml';
import { collectObservers, pairOf } from '../rules/yaml/context';
import { yamlRules } from '../rules/yaml';
import type { Finding } from '../rules/types';
import { validateConfigSchema, type SchemaError } from './schema';

export function parseConfig(text: string): Document.Parsed {
  return parseDocument(text, { prettyErrors: false, uniqueKeys: true });
}

export function configFindings(text: string): Finding[] {
  const doc = parseConfig(text);
  const findings: Finding[] = doc.errors.map((e) => ({
    code: 'YAML', severity: 'error' as const, start: e.pos[0], end: Math.max(e.pos[1], e.pos[0] + 1),
    message: e.message.split('\n')[0],
  }));
  if (doc.errors.length > 0) return findings;
  const data = doc.toJS();
  if (!validateConfigSchema(data)) {
    for (const err of validateConfigSchema.errors ?? []) findings.push(schemaFinding(doc, err));
  }
  const ctx = { doc, observers: collectObservers(doc) };
  for (const rule of yamlRules) findings.push(...rule(ctx));
  return findings;
}

function schemaFinding(doc: Document.Parsed, err: SchemaError): Finding {
  const segments = err.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const path = segments.map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  const node = doc.getIn(path, true) as Node | undefined;
  let range = node?.range ?? doc.contents?.range ?? [0, 1];
  let message = `${segments.join('.') || 'config'} ${err.message ?? 'is invalid'}`;
  if (err.keyword === 'additionalProperties') {
    const key = String(err.params.additionalProperty);
    const pair = isMap(node) ? pairOf(node, key) : undefined;
    if (pair && isScalar(pair.key) && pair.key.range) range = pair.key.range;
    message = `Unknown key '${key}'${segments.length ? ` in ${segments.join('.')}` : ''}.`;
  } else if (err.keyword === 'enum') {
    message = `${segments.join('.')} must be one of: ${(err.params.allowedValues as unknown[]).join(', ')}.`;
  }
  return { code: 'QCFG000', severity: 'error', start: range[0], end: Math.max(range[1], range[0] + 1), message };
}

/** A YAML file is a QAT config when named *.qat.yaml, or when it has version and qconfig at top level. */
export function isQatConfig(uri: string, text: string): boolean {
  if (/\.qat\.ya?ml$/i.test(uri)) return true;
  return /^version:\s*1\s*$/m.test(text) && /^qconfig:/m.test(text);
}
