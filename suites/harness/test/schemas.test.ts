import { Ajv } from 'ajv';
import { describe, expect, test } from 'vitest';
import { schemas, validate } from '../schemas.ts';

describe('error object', () => {
  test('valid, extra properties allowed', () => {
    expect(validate('error', { error: true, type: 'Unauthorized', message: 'Incorrect or missing username or password' })).toEqual([]);
    expect(validate('error', { error: true, type: 'Not Found', message: 'x', code: 404 })).toEqual([]);
  });
  test.each([
    [{ error: false, type: 'a', message: 'b' }, '/error must be true'],
    [{ error: 'true', type: 'a', message: 'b' }, '/error must be true'],
    [{ error: true, message: 'b' }, "/ must have required property 'type'"],
    [{ error: true, type: 401, message: 'b' }, '/type must be string'],
    [[], '/ must be object'],
  ])('%j → %s', (value, message) => {
    expect(validate('error', value)).toContain(message);
  });
});

describe('count object', () => {
  test('valid', () => {
    expect(validate('count', { num_items: 0, num_pages: 0, num_items_per_page: 20 })).toEqual([]);
  });
  test('all problems are reported', () => {
    expect(validate('count', { num_items: '3', num_pages: -1, num_items_per_page: 2.5 })).toEqual([
      '/num_items must be integer',
      '/num_pages must be >= 0',
      '/num_items_per_page must be integer',
    ]);
  });
});

describe('version objects', () => {
  const ok = { version: '13.166.291', version_date: '2024-02-29', api_version: '6' };
  test('valid', () => {
    expect(validate('version', ok)).toEqual([]);
    expect(validate('versionLatest', { ...ok, latest_version: '' })).toEqual([]);
  });
  test('latest_version must be absent from version.json and present in check_latest', () => {
    expect(validate('version', { ...ok, latest_version: '14.0' })).toEqual(['/latest_version must be absent']);
    expect(validate('versionLatest', ok)).toEqual(["/ must have required property 'latest_version'"]);
    expect(validate('versionLatest', { ...ok, latest_version: null })).toEqual(['/latest_version must be string']);
  });
  test.each(['1.', '.1', 'v13', '13.x', '', '1..2'])('version %j is not dotted numbers', (version) => {
    expect(validate('version', { ...ok, version })).toEqual(['/version must match pattern "^\\d+(\\.\\d+)*$"']);
  });
  test.each(['2023-02-29', '2024-13-01', '2024-04-31', '2024-00-10'])('version_date %s is not a calendar date', (version_date) => {
    expect(validate('version', { ...ok, version_date })).toEqual(['/version_date must be a valid date']);
  });
  test.each(['2024-2-29', '24-02-29', '2024-02-29T00:00:00Z', '20240229'])('version_date %s is not YYYY-MM-DD', (version_date) => {
    expect(validate('version', { ...ok, version_date })).toContain('/version_date must match pattern "^\\d{4}-\\d{2}-\\d{2}$"');
  });
  test('api_version is a string (product-facts: "6", not 6)', () => {
    expect(validate('version', { ...ok, api_version: 6 })).toEqual(['/api_version must be string']);
  });
});

describe('created object', () => {
  test.each([
    [{ id: 12 }, []],
    [{ id: '12' }, ['/id must be integer']],
    [{ id: 1.5 }, ['/id must be integer']],
    [{}, ["/ must have required property 'id'"]],
    [null, ['/ must be object']],
  ])('%j', (value, messages) => {
    expect(validate('created', value)).toEqual(messages);
  });
});

test('the published schemas are plain JSON with distinct $id', () => {
  const all = Object.values(schemas);
  expect(JSON.parse(JSON.stringify(all))).toEqual(all);
  expect(new Set(all.map((s) => s.$id)).size).toBe(all.length);
});

// schemas.ts compiles them without checking them against the meta-schema (a run's start-up): here they are.
test('every schema is valid against JSON Schema draft-07', () => {
  const ajv = new Ajv({ strict: true });
  for (const schema of Object.values(schemas)) expect(ajv.validateSchema(schema), `${schema.$id}: ${ajv.errorsText()}`).toBe(true);
  expect(ajv.validateSchema({ type: 'object', required: 3 })).toBe(false);
});
