/**
 * What the test client does in the kill matrix: the calls a typical integration makes. Each
 * step runs even when an earlier one failed (a faulty variant's requests are refused), so every
 * request of the workload reaches the kit; the failures are returned, not thrown.
 */
import type { TestClient } from './client.ts';

export interface WorkloadResult {
  errors: string[];
  /** Items the conforming run listed (the list of the created passwords). */
  listed: number;
}

export const WORKLOAD_PASSWORDS = 7;

export async function runWorkload(client: TestClient, label: string): Promise<WorkloadResult> {
  const errors: string[] = [];
  const step = async <T>(what: string, fn: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await fn();
    } catch (e) {
      errors.push(`${what}: ${(e as Error).message}`);
      return undefined;
    }
  };
  await step('version', () => client.version());
  // A cache-busting query, as many HTTP clients add: HMAC signs it with the path.
  await step('version with a query', () => client.request('GET', `version?_=${Date.now()}`).then((r) => r.status));
  const project = await step('create project', () => client.create('projects', { name: `pmv6-client-${label}`, parent_id: 0 }));
  const ids: number[] = [];
  for (let i = 1; i <= WORKLOAD_PASSWORDS; i++) {
    const id = await step(`create password ${i}`, () =>
      client.create('passwords', { name: `pmv6 client ${label} ${i}`, project_id: project ?? 0, username: 'svc' }),
    );
    if (id !== undefined) ids.push(id);
  }
  const listPath = project !== undefined ? `projects/${project}/passwords` : 'passwords';
  await step('count', () => client.count(listPath));
  const listed = (await step('list all', () => client.listAll(listPath))) ?? [];
  // A search term with a space: the path is percent-encoded on the wire and signed as sent.
  await step('search', () => client.request('GET', `passwords/search/${encodeURIComponent(`pmv6 client ${label}`)}`, { pageSize: true }).then((r) => r.status));
  if (ids[0] !== undefined) await step('update', () => client.update(`passwords/${ids[0]}`, { notes: 'changed by the test client' }));
  for (const id of ids) await step(`delete password ${id}`, () => client.remove(`passwords/${id}`));
  if (project !== undefined) await step('delete project', () => client.remove(`projects/${project}`));
  return { errors, listed: listed.length };
}
