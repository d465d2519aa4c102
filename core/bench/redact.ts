// Redaction time per MB for 1 MB and 10 MB bodies of several kinds, measured side by side in one
// run: a ratio of totals near 10 (per-MB times alike) is linear. Also the work counts (bytes of
// decoded views and automaton steps per byte) that core/test/redact.test.ts bounds. A benchmark
// to read, not a test that can flake.
// First, the cost per registered secret as a run pays it (a user's password and HMAC key
// registered, then a progress line scrubbed, over and over), for runs of more and more users:
// the old way (one automaton over all secrets, rebuilt after each registration) beside the
// growing one (issue 38), in one run. Flat per-secret figures as the users grow are the target.
// Run: npm run bench:redact  (PMV6_BENCH_USERS=N secrets registered as a run with N users would)
import { randomBytes } from 'node:crypto';
import { clearSecrets, lastScanBytes, lastSearchSteps, registerCredentials, registerSecret, scrub, setRedactionStrategy } from '../redact.ts';

function perSecret(strategy: 'grow' | 'rebuild', users: number): number {
  clearSecrets();
  setRedactionStrategy(strategy);
  const started = performance.now();
  for (let u = 0; u < users; u++) {
    registerCredentials(`pmv6-r1-user-${u}`, randomBytes(9).toString('base64url'), `password of pmv6-r1-user-${u}`);
    registerSecret(randomBytes(32).toString('hex'), 'HMAC private key');
    scrub(`[${u}/${users}] suites/auth/basic.test.ts AUTH-0${u % 10} pmv6-r1-user-${u} GET /index.php/api/v6/users/${u}.json → 200`);
  }
  // Three secrets a user: the password, user:password, the HMAC key.
  return (performance.now() - started) / (3 * users);
}
console.log('users  secrets   rebuilt after each (old) µs/secret   growing µs/secret   old/new');
for (const users of [25, 100, 400]) {
  const old = perSecret('rebuild', users);
  const grown = perSecret('grow', users);
  console.log(
    `${String(users).padStart(5)}${String(3 * users).padStart(9)}${(old * 1000).toFixed(0).padStart(38)}${(grown * 1000).toFixed(0).padStart(20)}${(old / grown).toFixed(1).padStart(10)}`,
  );
}
clearSecrets();
setRedactionStrategy('grow');

const USERS = Number(process.env.PMV6_BENCH_USERS ?? 50);
const password = 'Tr0ub4dor&3 "quoted" /ü+€';
registerCredentials('admin', password, 'password');
registerSecret(`ctl_${randomBytes(16).toString('base64url')}`, 'control token');
for (let u = 0; u < USERS; u++) {
  registerCredentials(`pmv6-r1-user-${u}`, randomBytes(9).toString('base64url'), `password of pmv6-r1-user-${u}`);
  registerSecret(randomBytes(32).toString('hex'), 'HMAC private key');
}
let t = performance.now();
scrub('build the automaton');
console.log(`${USERS} users' secrets registered; automaton built in ${(performance.now() - t).toFixed(0)} ms`);

const hex = Buffer.from(password).toString('hex');
const echo = [
  password,
  encodeURIComponent(password),
  JSON.stringify(password),
  Buffer.from(password).toString('base64'),
  hex,
  hex.toUpperCase(),
  hex.replace(/(..)(?!$)/g, '$1 '),
].join(' | ');

const MB = 1 << 20;
const repeat = (unit: string, n: number) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
const KINDS: Record<string, (n: number) => string> = {
  'JSON list': (n) => repeat('{"id":123,"name":"pmv6-r1-project-7","notes":"x y z","tags":["a","b"]},', n),
  'one letter': (n) => 'a'.repeat(n),
  'base64 text': (n) => randomBytes(n).toString('base64').slice(0, n),
  'hex text': (n) => randomBytes(n).toString('hex').slice(0, n),
  'binary as Latin-1': (n) => randomBytes(n).toString('latin1'),
  'hostile echo': (n) => repeat(`{"error":"${echo}"} `, n),
};

console.log('kind                  1 MB ms/MB  10 MB ms/MB  ratio of totals  decoded B/B  steps/B');
for (const [kind, make] of Object.entries(KINDS)) {
  const small = make(MB);
  const large = make(10 * MB);
  const time = (text: string) => {
    t = performance.now();
    scrub(text);
    return performance.now() - t;
  };
  time(small);
  const a = time(small);
  const b = time(large);
  const perByte = (lastScanBytes / large.length).toFixed(1);
  const steps = (lastSearchSteps / (large.length + lastScanBytes)).toFixed(2);
  console.log(
    `${kind.padEnd(22)}${a.toFixed(0).padStart(11)}${(b / 10).toFixed(0).padStart(13)}${(b / a).toFixed(1).padStart(17)}${perByte.padStart(13)}${steps.padStart(9)}`,
  );
}
