import type { ErrorObject, SchemaObject, ValidateFunction } from 'ajv';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';

const SCHEMA_BASE = 'https://pmv6.invalid/schemas/v6/';

/** §2 Error object: "error: boolean, always true; type: description of the status code; message: reason for the failure" */
export const errorSchema = {
  $id: `${SCHEMA_BASE}error.json`,
  title: 'Error object',
  type: 'object',
  properties: {
    error: { const: true },
    type: { type: 'string' },
    message: { type: 'string' },
  },
  required: ['error', 'type', 'message'],
} as const satisfies SchemaObject;

const count = { type: 'integer', minimum: 0 } as const;

/** §2 Count object: num_items, num_pages, num_items_per_page (integers) */
export const countSchema = {
  $id: `${SCHEMA_BASE}count.json`,
  title: 'Count object',
  type: 'object',
  properties: { num_items: count, num_pages: count, num_items_per_page: count },
  required: ['num_items', 'num_pages', 'num_items_per_page'],
} as const satisfies SchemaObject;

const versionProperties = {
  version: { type: 'string', pattern: '^\\d+(\\.\\d+)*$', description: 'software version, dotted numbers' },
  version_date: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', format: 'date', description: 'YYYY-MM-DD' },
  api_version: { type: 'string' },
} as const;

/** §4 GET /version.json: "version object without latest_version" */
export const versionSchema = {
  $id: `${SCHEMA_BASE}version.json`,
  title: 'Version object',
  type: 'object',
  properties: { ...versionProperties, latest_version: false },
  required: ['version', 'version_date', 'api_version'],
} as const satisfies SchemaObject;

/** §2: latest_version "only in the check_latest response; empty string when the latest version cannot be checked" */
export const versionLatestSchema = {
  $id: `${SCHEMA_BASE}version-latest.json`,
  title: 'Version object with latest_version',
  type: 'object',
  properties: { ...versionProperties, latest_version: { type: 'string' } },
  required: ['version', 'version_date', 'api_version', 'latest_version'],
} as const satisfies SchemaObject;

/** §2: "Successful creation returns an object with id (integer, the new ... id)" */
export const createdSchema = {
  $id: `${SCHEMA_BASE}created.json`,
  title: 'Created object',
  type: 'object',
  properties: { id: { type: 'integer' } },
  required: ['id'],
} as const satisfies SchemaObject;

export const schemas = {
  error: errorSchema,
  count: countSchema,
  version: versionSchema,
  versionLatest: versionLatestSchema,
  created: createdSchema,
} as const;

export type SchemaName = keyof typeof schemas;

/**
 * Decision (issue 38): these schemas are ours and fixed, so they are not checked against JSON
 * Schema's meta-schema as each run starts (compiling the meta-schema was 30-40 ms of every run's
 * start-up, before its first request); test/schemas.test.ts checks them once.
 */
const ajv = new Ajv({ strict: true, allErrors: true, validateSchema: false });
addFormatsModule.default(ajv, ['date']);

const validators = Object.fromEntries(Object.entries(schemas).map(([name, schema]) => [name, ajv.compile(schema)])) as Record<SchemaName, ValidateFunction>;

function describe(e: ErrorObject): string {
  const at = e.instancePath || '/';
  if (e.keyword === 'false schema') return `${at} must be absent`;
  if (e.keyword === 'const') return `${at} must be ${JSON.stringify(e.params['allowedValue'])}`;
  if (e.keyword === 'format') return `${at} must be a valid ${String(e.params['format'])}`;
  return `${at} ${e.message ?? 'is invalid'}`;
}

/** Empty array = valid; otherwise readable messages such as "/id must be integer". */
export function validate(name: SchemaName, value: unknown): string[] {
  const check = validators[name];
  if (check(value)) return [];
  return (check.errors ?? []).map(describe);
}
