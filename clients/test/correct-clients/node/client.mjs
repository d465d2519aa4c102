// A correct client of the Password Manager API v6 in plain Node.js (fetch), for `pmv6 clients run`:
// many creates, every list paged by Link rel="next", records printed with the word "password",
// several calls under one deadline with a timeout each; every failure is one line with the
// server's message (or the status of a page that is not JSON) and a non-zero exit.
import { randomBytes } from 'node:crypto';

const api = process.env.PMV6_API_URL;
const project = Number(process.env.PMV6_PROJECT_ID);
const auth = `Basic ${Buffer.from(`${process.env.PMV6_USER}:${process.env.PMV6_PASSWORD}`).toString('base64')}`;
const TIMEOUT_MS = 10_000;
const CREATE = 32;

class ApiError extends Error {}

async function call(method, url, body) {
  let res;
  let text;
  try {
    res = await fetch(url, {
      method,
      headers: { authorization: auth, 'content-type': 'application/json; charset=utf-8', 'user-agent': 'pmv6-correct-node/1' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    text = await res.text();
  } catch (e) {
    throw new ApiError(`no usable reply: ${e.cause?.message ?? e.message}`);
  }
  const type = res.headers.get('content-type') ?? '';
  let json;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    throw new ApiError(`HTTP ${res.status} (${type || 'no content type'}), not JSON`);
  }
  if (res.status >= 400) {
    const message = typeof json?.message === 'string' && json.message !== '' ? json.message : `HTTP ${res.status}`;
    throw new ApiError(`${res.status} ${message}`);
  }
  return { link: res.headers.get('link') ?? '', json };
}

function nextLink(link) {
  for (const m of link.matchAll(/<([^>]*)>\s*;\s*rel="?([^",;]+)"?/g)) if (m[2] === 'next') return m[1];
  return undefined;
}

async function listAll(path) {
  const items = [];
  for (let url = api + path; url !== undefined; ) {
    const page = await call('GET', url);
    items.push(...(Array.isArray(page.json) ? page.json : []));
    url = nextLink(page.link);
  }
  return items;
}

async function main() {
  let errors = 0;
  const created = [];
  try {
    for (let i = 0; i < CREATE; i++) {
      const { json } = await call('POST', `${api}passwords.json`, {
        name: `pmv6-node-${i}`,
        project_id: project,
        password: randomBytes(12).toString('base64url'),
      });
      created.push(json.id);
    }
    console.log(`created ${created.length} passwords`);
  } catch (e) {
    errors++;
    console.error(`error: could not create password: ${e.message}`);
  }
  try {
    const passwords = await listAll('passwords.json');
    for (const p of passwords) console.log(`password ${p.id}: ${p.name}`);
    if (passwords.length > 0) console.log(`failed to find password: ${passwords[0].name} has none in the list (the list shows no password)`);
    console.log(`listed ${passwords.length} passwords`);
  } catch (e) {
    errors++;
    console.error(`error: failed to list passwords: ${e.message}`);
  }
  try {
    console.log(`listed ${(await listAll('projects.json')).length} projects`);
  } catch (e) {
    errors++;
    console.error(`error: failed to list projects: ${e.message}`);
  }
  for (const id of created) {
    try {
      await call('DELETE', `${api}passwords/${id}.json`);
    } catch (e) {
      errors++;
      console.error(`error: failed to delete password ${id}: ${e.message}`);
      break;
    }
  }
  return errors > 0 ? 1 : 0;
}

process.exitCode = await main();
