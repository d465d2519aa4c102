import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { UsageError } from '../core/errors.ts';

import { RESULTS_FORMAT, type ResultsDocument } from './results-json.ts';

export const RESULTS_SCHEMA_FILE = new URL('./schema/results.schema.json', import.meta.url);

const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormatsModule.default(ajv, ['date-time']);
const validate = ajv.compile<ResultsDocument>(JSON.parse(readFileSync(RESULTS_SCHEMA_FILE, 'utf8')) as object);

/** The schema's complaints about a document, one per line; empty when it is a valid results document. */
export function resultsErrors(doc: unknown): string[] {
  if (validate(doc)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
}

/** An unreadable or invalid results file is a usage error (exit 2). */
export class ResultsFileError extends UsageError {
  override name = 'ResultsFileError';
}

export async function readResultsFile(file: string): Promise<ResultsDocument> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new ResultsFileError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new ResultsFileError(`${file} is not JSON: ${(e as Error).message}`);
  }
  const format = (doc as { format?: unknown } | null)?.format;
  if (typeof format === 'string' && format !== RESULTS_FORMAT && format.startsWith('pmv6-results/')) {
    throw new ResultsFileError(`${file} is format ${format}; this pmv6 reads ${RESULTS_FORMAT}`);
  }
  const errors = resultsErrors(doc);
  if (errors.length > 0) {
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
    throw new ResultsFileError(`${file} is not a valid ${RESULTS_FORMAT} document: ${errors[0]}${more}`);
  }
  return doc as ResultsDocument;
}
