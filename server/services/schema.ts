// The QConfig JSON Schema, compiled once; the same file is contributed to VS Code and used by the kernel.
import Ajv, { type ErrorObject } from 'ajv';
import schema from '../../protocol/qat-config.schema.json';

const ajv = new Ajv({ allErrors: true, strict: false });
export const validateConfigSchema = ajv.compile(schema);
export const configSchema = schema;
export type SchemaError = ErrorObject;
