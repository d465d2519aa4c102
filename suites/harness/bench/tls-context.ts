// The cost of a new TLS connection to the embedded server's kind of target (a throwaway CA),
// side by side in one run: the trusted CA given to every connect (`ca`, node builds a context
// each time: the way before issue 38) against one context made once (`secureContext`, what the
// harness client and the load engine do now). A benchmark to read, not a test.
// Run: node --import tsx suites/harness/bench/tls-context.ts
import { createServer } from 'node:https';
import { connect, createSecureContext } from 'node:tls';
import { selfSignedCertificate } from '../../../targets/tls.ts';

const cert = selfSignedCertificate();
if (!cert) throw new Error('no openssl');
const server = createServer({ key: cert.key, cert: cert.cert }, (_req, res) => res.end('{}'));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = (server.address() as { port: number }).port;
const context = createSecureContext({ ca: cert.cert });

function once(shared: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, ...(shared ? { secureContext: context } : { ca: cert!.cert }) }, () => {
      s.end();
      resolve();
    });
    s.on('error', reject);
  });
}
async function time(shared: boolean, n: number): Promise<number> {
  const t = performance.now();
  for (let i = 0; i < n; i++) await once(shared);
  return (performance.now() - t) / n;
}
const N = 300;
await time(false, 20);
await time(true, 20);
const rows: Array<[number, number]> = [];
for (let round = 0; round < 3; round++) rows.push([await time(false, N), await time(true, N)]);
for (const [a, b] of rows) console.log(`ca per connect ${a.toFixed(2)} ms   one context ${b.toFixed(2)} ms   ratio ${(b / a).toFixed(2)}`);
server.close();
