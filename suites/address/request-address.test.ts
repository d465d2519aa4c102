import { headerValue } from '../../core/exchange.ts';
import { expectStatus, violation } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { ApiClient } from '../harness/client.ts';
import { useSession } from '../harness/session.ts';

const s = useSession();
const PROBE_TIMEOUT_MS = 3_000;

clauseTest('ADDR-01', 'answer GET version.json and passwords.json at {base_url}/index.php/api/v6/', async () => {
  const base = `${s.config.target.replace(/\/+$/, '')}/index.php/api/v6/`;
  const version = await s.admin.request({ method: 'GET', path: '', url: `${base}version.json` });
  expectStatus(version, 200);
  const list = await s.admin.request({ method: 'GET', path: '', url: `${base}passwords.json` });
  expectStatus(list, 200);
  if (!Array.isArray(list.json)) violation(list, 'a JSON array', list.json === undefined ? 'no JSON body' : typeof list.json);
});

clauseTest('ADDR-02', 'serve the API over https', async (t) => {
  const url = new URL(s.config.target);
  if (url.protocol !== 'https:') t.unverifiable('the target was given as http');
  expectStatus(await s.admin.get('/version.json'), 200);
});

clauseTest('ADDR-03', 'record whether an https installation also answers on plain http', async (t) => {
  const url = new URL(s.config.target);
  if (url.protocol !== 'https:') {
    t.observe('scheme of the target', 'http');
    // "Plain http also works if the installation itself uses http".
    expectStatus(await s.admin.get('/version.json'), 200);
    return;
  }
  // No credentials: they would travel in clear text.
  const plain = `http://${url.hostname}${url.pathname.replace(/\/+$/, '')}`;
  const probe = new ApiClient({ target: plain, auth: { kind: 'none' }, timeoutMs: PROBE_TIMEOUT_MS });
  try {
    const ex = await probe.get('/version.json');
    t.observe('scheme of the target', 'https');
    t.observe('plain http probe', `${plain}/index.php/api/v6/version.json`);
    if (!ex.response) {
      t.observe('plain http reply', `no response: ${ex.error ?? 'unknown error'}`);
      return;
    }
    t.observe('plain http reply', ex.response.status);
    const location = headerValue(ex.response.headers, 'location');
    if (location !== undefined) t.observe('plain http redirect', location);
  } finally {
    await probe.close();
  }
});
