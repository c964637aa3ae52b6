// The QConfig JSON Schema, compiled once; the same file is contributed to VS Code and used by the kernel.
import Ajv, { type ErrorObject } from 'ajv';
import schema from '../../protocol/qat-config.schema.json';

const ajv = new Ajv({ allErrors: true, strict: false });
export const validateConfigSchema = ajv.compile(schema);
export const configSchema = schema;
export type SchemaError = ErrorObject;

export interface SchemaNode {
  type?: string | string[];
  description?: string;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  items?: SchemaNode;
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
  oneOf?: SchemaNode[];
  $ref?: string;
}

const root = schema as unknown as SchemaNode & { definitions: Record<string, SchemaNode> };

/** Resolves `$ref` (local definitions only), keeping a description written beside the reference. */
export function deref(node: SchemaNode | undefined): SchemaNode | undefined {
  if (!node?.$ref) return node;
  const target = root.definitions[node.$ref.replace('#/definitions/', '')];
  return target ? { ...target, description: node.description ?? target.description } : undefined;
}

/** The schema of the value at a path of keys; array items are reached by any number or '*'. */
export function schemaAt(path: Array<string | number>): SchemaNode | undefined {
  let node: SchemaNode | undefined = root;
  for (const seg of path) {
    node = deref(node);
    if (!node) return undefined;
    if (typeof seg === 'number' || seg === '*') node = node.items;
    else node = objectBranch(node)?.properties?.[seg];
  }
  return deref(node);
}

/** For a oneOf of string | object (targets[].tvm), the object alternative. */
export function objectBranch(node: SchemaNode | undefined): SchemaNode | undefined {
  if (!node) return undefined;
  if (node.properties) return node;
  return node.oneOf?.map(deref).find((n) => n?.properties);
}

/** A value to insert for a missing key, of the schema's type. */
export function placeholderFor(node: SchemaNode | undefined): string {
  if (!node) return '""';
  if (node.const !== undefined) return JSON.stringify(node.const);
  if (node.default !== undefined) return JSON.stringify(node.default);
  if (node.enum?.length) return String(node.enum[0]);
  if (node.type === 'object' || node.properties) return '{}';
  if (node.type === 'array') return '[]';
  if (node.type === 'integer' || node.type === 'number') return '0';
  return '""';
}
