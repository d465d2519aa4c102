import { type ClientRunResult, runClient } from '../../clients/run/run-client.ts';

// A `pmv6 clients run` result for the report tests, from a real run of a small command that
// behaves by scenario: under normal it reads a list and succeeds; under maintenance it prints the
// body it sent (a password) in its error; under proxy-502 it parses the HTML page as JSON and
// crashes with a stack trace; under slow it waits for ever. So the reports have passing and
// failing rows, a secret line (a secret the command makes, so the command line does not hold it), a crash trace with its lines, a hang and requests without answers.
export const PRINTED_SECRET = 'report-secret-0f3a9c1d';

const SCRIPT = `
const api = process.env.PMV6_API_URL, scenario = process.env.PMV6_SCENARIO;
const headers = { authorization: 'Basic ' + Buffer.from(process.env.PMV6_USER + ':' + process.env.PMV6_PASSWORD).toString('base64'),
  'content-type': 'application/json; charset=utf-8', 'user-agent': 'report-fixture/1 <b>&amp;' };
(async () => {
  if (scenario === 'normal') {
    const res = await fetch(api + 'projects.json', { headers, signal: AbortSignal.timeout(5000) });
    console.log('password 1: listed ' + (await res.json()).length + ' projects <script>alert(1)</script>');
    return;
  }
  const body = JSON.stringify({ name: 'x', project_id: 1, password: ${JSON.stringify(PRINTED_SECRET.split('-'))}.join('-') });
  const res = await fetch(api + 'passwords.json', { method: 'POST', headers, body });
  const text = await res.text();
  if (scenario === 'maintenance') { console.error('could not create ' + body + ': ' + res.status); process.exit(1); }
  JSON.parse(text);
})();`;

export function fixtureRun(): Promise<ClientRunResult> {
  return runClient({
    command: [process.execPath, '-e', SCRIPT],
    scenarios: ['normal', 'maintenance', 'proxy-502', 'slow'],
    deadlineMs: 2_000,
    maxMs: 20_000,
    jobs: 4,
  });
}
