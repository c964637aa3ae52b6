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
  additionalProperties?: SchemaNode | boolean;
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
  oneOf?: SchemaNode[];
  anyOf?: SchemaNode[];
  $ref?: string;
}

const root = schema as unknown as SchemaNode & { definitions: Record<string, SchemaNode> };

/** Resolves `$ref` (local definitions only), keeping a description written beside the reference. */
export function deref(node: SchemaNode | undefined): SchemaNode | undefined {
  if (!node?.$ref) return node;
  const target = root.definitions[node.$ref.replace('#/definitions/', '')];
  return target ? { ...target, description: node.description ?? target.description } : undefined;
}

/** The schema of the value at a path of keys; array items are reached by any number or '*'. A key a map
 * does not name takes the map's `additionalProperties` schema (model.example_input's input names). */
export function schemaAt(path: Array<string | number>): SchemaNode | undefined {
  let node: SchemaNode | undefined = root;
  for (const seg of path) {
    node = deref(node);
    if (!node) return undefined;
    if (typeof seg === 'number' || seg === '*') node = itemsOf(node);
    else {
      const obj = objectBranch(node);
      node = obj?.properties?.[seg] ?? valueSchema(obj?.additionalProperties);
    }
  }
  return deref(node);
}

const valueSchema = (node: SchemaNode | boolean | undefined) => (typeof node === 'object' ? node : undefined);

/** For a oneOf of string | object (targets[].tvm) or of array | map (model.example_input), the object alternative:
 * one with named keys, else one whose keys are free with a schema for their values. */
export function objectBranch(node: SchemaNode | undefined): SchemaNode | undefined {
  if (!node) return undefined;
  if (node.properties || valueSchema(node.additionalProperties)) return node;
  const branches = node.oneOf?.map(deref) ?? [];
  return branches.find((n) => n?.properties) ?? branches.find((n) => valueSchema(n?.additionalProperties));
}

/** The items schema of an array, or of the array alternative of a oneOf whose items are maps (a list of specs). */
function itemsOf(node: SchemaNode): SchemaNode | undefined {
  if (node.items) return node.items;
  const items = (node.oneOf ?? []).map((n) => deref(n)?.items).filter((n) => n !== undefined);
  return items.find((n) => objectBranch(deref(n))) ?? items[0];
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
