import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, test } from 'vitest';
import { encodeNested, leakedForm, nestingArb } from '../../core/test/encodings.ts';
import { megabytes, type TreeMemory, treeMemoryText, watchTreeMemory } from '../../suites/runner/process-memory.ts';
import { slots } from './slots.ts';
import { BIN } from './spawn-cli.ts';

// The CLI against hostile and broken servers (all on loopback): every case ends with exit 2 (or
// 130/143 after a signal) within 20 s, below 300 MB RSS, with one line on stderr, no stack trace
// and no form of any secret in any output. Independent cases run concurrently.
// Memory is that of the whole process tree the CLI starts (the CLI, vitest's worker, tsx's esbuild
// service): the sum of each process's peak (VmHWM), see suites/runner/process-memory.ts.

const WALL_MS = 20_000;
const RSS_LIMIT = 300 * 1024 * 1024;
/**
 * Cases that get past the preflight run the suites: they get the same 300 MB for the whole tree
 * (the suites run in the CLI's own process: 190 MB for a full run against a URL target, measured
 * by `npm run bench:memory`), and more time, since they run the suite files.
 */
const FULL_RUN = { wallMs: 45_000, rss: RSS_LIMIT };
/** CLI children at once: more only queue for the 2 shared cores and blur the wall-time bound. */
const AT_ONCE = 3;
const slot = slots(AT_ONCE);
const USER = 'admin';
/** Characters that broke the old redaction: quotes, backslashes, %, +, /, non-ASCII. */
const PASSWORD = `p"w\\%+/é€-${randomBytes(6).toString('hex')}`;
// No control token: these targets have no control protocol, and a token without --control is refused
// (issue 27). The token's redaction is the hostile target's echo case (bin/test/hostile-target.test.ts).
const ENV = { PMV6_USER: USER, PMV6_PASSWORD: PASSWORD, PMV6_CONTROL_TOKEN: '', PMV6_DEBUG: '' };
const VERSION = JSON.stringify({ version: '1.0.0', version_date: '2026-01-01', api_version: '6' });

const dir = mkdtempSync(join(tmpdir(), 'pmv6-hostile-'));
const closers: Array<() => void> = [];
afterAll(() => {
  for (const close of closers) close();
  rmSync(dir, { recursive: true, force: true });
});

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

async function hostile(handler: Handler): Promise<string> {
  const sockets = new Set<Socket>();
  const server = createServer(handler);
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  });
  closers.push(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** Writes `chunk` every `ms` until the client goes away. */
function drip(res: ServerResponse, chunk: Buffer, ms: number): void {
  const timer = setInterval(() => {
    if (res.destroyed) clearInterval(timer);
    else res.write(chunk);
  }, ms);
  res.on('close', () => clearInterval(timer));
}

/** Writes as fast as the client reads, for ever (or up to `total` bytes). */
function flood(res: ServerResponse, total = Infinity): void {
  const block = Buffer.alloc(64 * 1024, 0x61);
  let sent = 0;
  const more = () => {
    while (!res.destroyed && sent < total) {
      sent += block.length;
      if (!res.write(block)) return void res.once('drain', more);
    }
    if (sent >= total) res.end();
  };
  more();
}

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** Peak memory of the whole process tree the CLI started. */
  memory: TreeMemory;
  /** ms from the signal sent by `signalAfterMs` to the exit */
  afterSignalMs?: number;
}

/** True when every folder above `file` lets other users through (o+x) and the file is readable to them (o+r). */
function othersCanReach(file: string): boolean {
  try {
    if ((statSync(file).mode & 0o004) === 0) return false;
    for (let dir = dirname(file); ; dir = dirname(dir)) {
      if ((statSync(dir).mode & 0o001) === 0) return false;
      if (dir === dirname(dir)) return true;
    }
  } catch {
    return false;
  }
}

/**
 * The credentials go with a run that names its target; a run without --target tests the embedded
 * server, and pmv6 refuses credentials in the environment there (the gate, issue 36).
 */
function envFor(args: string[]): Record<string, string> {
  if (args[0] !== 'run' || args.includes('--target')) return ENV;
  const { PMV6_USER: _u, PMV6_PASSWORD: _p, ...rest } = ENV;
  return rest;
}

async function pmv6(
  args: string[],
  env: Record<string, string> = {},
  opts: { signalAfterMs?: number; signalOnceSettled?: Promise<unknown>; uid?: number; wallMs?: number } = {},
): Promise<Outcome> {
  const release = await slot();
  return new Promise<Outcome>((resolve, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, ...envFor(args), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(opts.uid !== undefined ? { uid: opts.uid, gid: opts.uid, cwd: '/' } : {}),
    });
    let stdout = '';
    let stderr = '';
    let signalled: number | undefined;
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const memory = watchTreeMemory(child.pid!);
    // Past the case's own bound (which fails it), and some: a child killed here says nothing of why.
    const kill = setTimeout(() => child.kill('SIGKILL'), (opts.wallMs ?? WALL_MS) + 15_000);
    // SIGINT `signalAfterMs` after the start, or after `signalOnceSettled` when it is given.
    let signal: NodeJS.Timeout | undefined;
    const interrupt = () => {
      signalled = Date.now();
      child.kill('SIGINT');
    };
    const arm = () => {
      if (opts.signalAfterMs !== undefined && child.exitCode === null && child.signalCode === null) signal = setTimeout(interrupt, opts.signalAfterMs);
    };
    if (opts.signalOnceSettled) void opts.signalOnceSettled.then(arm);
    else arm();
    child.on('error', reject);
    child.on('close', (code, sig) => {
      const tree = memory.stop();
      clearTimeout(kill);
      if (signal) clearTimeout(signal);
      const ms = Date.now() - started;
      resolve({ code, signal: sig, stdout, stderr, ms, memory: tree, ...(signalled ? { afterSignalMs: Date.now() - signalled } : {}) });
    });
  }).finally(release);
}

/** Every form of the run's secrets a server or the CLI could have written. */
function secretForms(): string[] {
  const basic = Buffer.from(`${USER}:${PASSWORD}`).toString('base64');
  const forms = [PASSWORD, basic, basic.slice(4, -4)];
  for (const s of [PASSWORD]) forms.push(JSON.stringify(s).slice(1, -1), JSON.stringify(JSON.stringify(s)).slice(1, -1), encodeURIComponent(s));
  return forms;
}

function expectWellBehaved(r: Outcome, files: string[] = [], codes: number[] = [2], bounds = { wallMs: WALL_MS, rss: RSS_LIMIT }): void {
  const context = `exit ${r.code} after ${r.ms} ms, process tree ${treeMemoryText(r.memory)}\nstderr: ${r.stderr.slice(0, 600)}\nstdout: ${r.stdout.slice(-600)}`;
  expect(codes, context).toContain(r.code);
  expect(r.ms, context).toBeLessThan(bounds.wallMs);
  expect(r.memory.peak, `the process tree's peak RSS must stay under ${megabytes(bounds.rss)}: ${context}`).toBeLessThan(bounds.rss);
  if (codes.includes(2) && r.code === 2) expect(r.stderr.trim().split('\n'), context).toHaveLength(1);
  expect(/\n\s+at .*\(.*:\d+:\d+\)|\bat file:\/\//.exec(r.stderr + r.stdout)?.[0], context).toBeUndefined();
  const outputs = [r.stdout, r.stderr, ...files.map((f) => readFileSync(f, 'utf8'))];
  for (const form of secretForms()) for (const out of outputs) expect(out.includes(form), `a form of a secret in the output: ${form}`).toBe(false);
}

const json = (res: ServerResponse, status: number, body: string) => {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(body);
};

// Each broken server answers version.json (the preflight's first request) its broken way.
const BROKEN: Array<[string, Handler, RegExp]> = [
  [
    'a body that drips one byte every 2 s',
    (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      drip(res, Buffer.from(' '), 2_000);
    },
    /timed out after 3000 ms: no complete response \(headers and body\) to GET http:\/\/127\.0\.0\.1:\d+\/index\.php\/api\/v6\/version\.json/,
  ],
  [
    'an endless body',
    (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      flood(res);
    },
    /exceeded the cap of 1048576 bytes \(--max-response-bytes\)|timed out after 3000 ms/,
  ],
  [
    'a 1 GiB body with its Content-Length',
    (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(2 ** 30) });
      flood(res, 2 ** 30);
    },
    /the response to GET http:\/\/127\.0\.0\.1:\d+\/index\.php\/api\/v6\/version\.json exceeded the cap of 1048576 bytes/,
  ],
  [
    'headers and then nothing',
    (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': '100' });
      res.flushHeaders();
    },
    /timed out after 3000 ms/,
  ],
  [
    'a connection reset in the middle of the body',
    (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': '1000' });
      res.write(VERSION.slice(0, 20), () => res.socket?.resetAndDestroy());
    },
    /cannot reach http:\/\/127\.0\.0\.1:\d+: .*(ECONNRESET|UND_ERR_SOCKET|other side closed|terminated)/,
  ],
  [
    'a redirect loop',
    (q, res) => {
      res.writeHead(302, { location: q.url ?? '/' });
      res.end();
    },
    /no v6 API at .* answered 302/,
  ],
  [
    'an HTML page for version.json',
    (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>Welcome</title><p>It works');
    },
    /no v6 API at .* answered 200, not JSON/,
  ],
];

// Decision (runtime, issue 38): the run of the suites against the echoing server first and alone
// (beside other CLIs on a loaded machine its checks met their deadlines: harness errors); then
// every other case side by side (at most AT_ONCE CLIs), the one that waits for a signal first.
describe('a server that echoes secrets in nested encodings', () => {
  test('run, then report: nothing of the secrets in the console, the report files or the step summary', async () => {
    // Each error body carries the request's headers (the Basic credentials) and the
    // password, each under random nestings of the encodings of suites/harness/test/encodings.ts.
    const nestings = fc.sample(nestingArb, { seed: 15, numRuns: 24 });
    const echo = (req: IncomingMessage) => {
      const parts: Record<string, string> = {};
      const secrets = [String(req.headers.authorization ?? ''), PASSWORD, JSON.stringify(req.headers)];
      for (const [i, n] of nestings.entries()) parts[`echo${i}`] = encodeNested(secrets[i % secrets.length]!, n).text;
      return JSON.stringify({ error: true, type: 'Echo', message: `${req.headers.authorization} ${JSON.stringify(req.headers)}`, ...parts });
    };
    const target = await hostile((req, res) => {
      if (req.url?.endsWith('/version.json') && req.headers.authorization === `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`) {
        return json(res, 200, VERSION);
      }
      json(res, req.url?.includes('/version') ? 404 : 400, echo(req));
    });
    const reports = join(dir, 'echo-reports');
    const summary = join(dir, 'step-summary.md');
    const r = await pmv6(
      ['run', '--target', target, '--only', 'VER,ERR', '--report-dir', reports, '--timeout', '3000'],
      { GITHUB_STEP_SUMMARY: summary },
      { wallMs: FULL_RUN.wallMs },
    );
    const files = [...readdirSync(reports).map((f) => join(reports, f)), summary];
    // Exit 1 is the verdict, and the right one: this server answers everything but version.json with
    // an error, so the clauses that need another answer fail (GET /version/check_latest.json gets a 404).
    // Exit 2 is for a target that breaks the run; asked again after it, this one still passes the preflight.
    expectWellBehaved(r, files, [1], FULL_RUN);
    expect(r.stdout).toMatch(/verdict: NOT CONFORMANT/);
    // Within the block of VER-02 (up to the next clause), the exchange that shows why.
    expect(r.stdout).toMatch(
      /^FAIL \[VER-02\] (?:(?!\n\S)[\s\S])*> GET http:\/\/127\.0\.0\.1:\d+\/index\.php\/api\/v6\/version\/check_latest\.json\n(?:(?!\n\S)[\s\S])*< HTTP 404\n/m,
    );
    expect(r.stderr).not.toMatch(/failed during the run/);
    const results = JSON.parse(readFileSync(join(reports, 'results.json'), 'utf8')) as { harnessErrors: string[]; verdict: { counts: Record<string, number> } };
    expect(results.harnessErrors, "a harness error is never the server's violation").toEqual([]);
    expect(results.verdict.counts['harness-error']).toBe(0);
    expect(readFileSync(join(reports, 'results.json'), 'utf8')).toMatch(/«redacted/);
    const again = join(dir, 'echo-again');
    const rendered = await pmv6(['report', join(reports, 'results.json'), '--out', again], { GITHUB_STEP_SUMMARY: summary });
    const renderedFiles = [...readdirSync(again).map((f) => join(again, f)), summary];
    expectWellBehaved(rendered, renderedFiles, [0]);
    expect(rendered.stderr).toBe('');
    // Every output byte against every form each nesting gave the secrets.
    const basic = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
    const outputs = [r.stdout, r.stderr, rendered.stdout, ...[...files, ...renderedFiles].map((f) => readFileSync(f, 'utf8'))];
    for (const n of nestings) {
      for (const secret of [basic, PASSWORD]) {
        const { forms } = encodeNested(secret, n);
        for (const [k, out] of outputs.entries()) {
          const leak = leakedForm(out, forms);
          expect(
            leak,
            `output ${k}, nesting ${JSON.stringify(n)}, secret ${secret}: ${out.slice(Math.max(0, out.indexOf(leak ?? '') - 300), out.indexOf(leak ?? '') + 300)}`,
          ).toBeUndefined();
        }
      }
    }
    expect(statSync(join(again, 'report.html')).size).toBeGreaterThan(1000);
  }, 120_000);
});

describe.concurrent('Ctrl-C against a target that hangs', () => {
  test('SIGINT while every request hangs: exit 130 within 15 s of the signal, leftovers listed', async () => {
    // Decision (runtime, issue 38): the signal goes 1 s after the first request that hangs (the
    // suites have started and wait on it), not at a fixed 8 s after the start.
    let hanging!: () => void;
    const firstHang = new Promise<void>((resolve) => (hanging = resolve));
    const target = await hostile((req, res) => {
      if (req.url?.endsWith('/version.json')) return json(res, 200, VERSION);
      // never answers
      hanging();
    });
    const r = await pmv6(['run', '--target', target, '--only', 'PAG'], {}, { signalAfterMs: 1_000, signalOnceSettled: firstHang });
    expect(r.code, r.stderr).toBe(130);
    expect(r.afterSignalMs!).toBeLessThan(15_000);
    expect(r.memory.peak, `the process tree's peak RSS must stay under ${megabytes(FULL_RUN.rss)}: ${treeMemoryText(r.memory)}`).toBeLessThan(FULL_RUN.rss);
    expect(r.stderr).toMatch(/interrupted by SIGINT: no verdict/);
    expect(r.stderr).toMatch(/cleanup: deleted \d+ objects? created by the run; (at least )?\d+ left over/);
    expect(r.stderr + r.stdout).not.toMatch(/\n\s+at .*:\d+:\d+/);
    for (const form of secretForms()) expect((r.stdout + r.stderr).includes(form)).toBe(false);
  }, 90_000);
});

describe.concurrent('a server that echoes secrets, under load', () => {
  test.concurrent('load: thresholds fail (exit 1); nothing of the secrets on the console or in --out', async () => {
    const target = await hostile((req, res) => {
      if (req.url?.endsWith('/version.json')) return json(res, 200, VERSION);
      const auth = String(req.headers.authorization ?? '');
      json(
        res,
        400,
        JSON.stringify({
          error: true,
          type: 'Echo',
          message: `${auth} ${JSON.stringify(req.headers)} ${PASSWORD}`,
          b64: Buffer.from(JSON.stringify(auth)).toString('base64'),
        }),
      );
    });
    const out = join(dir, 'load-echo.json');
    const r = await pmv6(['load', '--scenario', 'mixed', '--target', target, '--duration', '2s', '--out', out]);
    expectWellBehaved(r, [out], [1]);
    expect(r.stdout).toMatch(/thresholds: FAILED/);
  }, 120_000);
});

describe.concurrent('pmv6 run and pmv6 load against broken servers', () => {
  for (const [name, handler, message] of BROKEN) {
    test.concurrent(`run: ${name}: exit 2 with one line`, async () => {
      const target = await hostile(handler);
      const r = await pmv6(['run', '--target', target, '--timeout', '3000', '--max-response-bytes', '1048576']);
      expectWellBehaved(r);
      expect(r.stderr).toMatch(message);
    }, 120_000);
  }
  for (const [name, handler, message] of BROKEN.filter(([n]) => /drips|1 GiB|reset|HTML/.test(n))) {
    test.concurrent(`load: ${name}: exit 2 with one line, before any load`, async () => {
      const target = await hostile(handler);
      const r = await pmv6(['load', '--scenario', 'mixed', '--target', target, '--timeout', '3000', '--duration', '5s', '--quiet']);
      expectWellBehaved(r);
      expect(r.stderr).toMatch(message.source.includes('cap of') ? /exceeded the cap of \d+ bytes/ : message);
    }, 120_000);
  }
});

describe.concurrent('output and input paths are checked before any work', () => {
  const file = join(dir, 'a-file');
  writeFileSync(file, 'x');
  const cases: Array<[string, string[], RegExp]> = [
    ['--report-dir that is a file', ['run', '--report-dir', file], /cannot write --report-dir .*a-file/],
    ['--report-dir under a file (ENOTDIR)', ['run', '--report-dir', join(file, 'sub')], /cannot write --report-dir .*ENOTDIR/],
    ['--report-dir under /proc', ['run', '--report-dir', '/proc/x/reports'], /cannot write --report-dir \/proc\/x\/reports/],
    ['--expectations that is a directory', ['run', '--expectations', dir], /cannot read --expectations .*EISDIR/],
    ['--expectations /dev/zero', ['run', '--expectations', '/dev/zero'], /cannot read --expectations \/dev\/zero: not a regular file/],
    ['load --out in a missing folder', ['load', '--scenario', 'mixed', '--out', join(dir, 'no', 'such', 'out.json')], /cannot write --out .*ENOENT/],
    ['load --report that is a directory', ['load', '--scenario', 'mixed', '--baseline', file, '--report', dir], /cannot write --report .*EISDIR/],
    ['load --baseline /dev/zero', ['load', '--scenario', 'mixed', '--baseline', '/dev/zero'], /cannot read --baseline \/dev\/zero/],
    ['report /dev/zero', ['report', '/dev/zero', '--out', dir], /cannot read results file \/dev\/zero: not a regular file/],
    ['report --out under /proc', ['report', file, '--out', '/proc/x'], /cannot write --out \/proc\/x/],
    [
      'a target URL with credentials',
      ['run', '--target', `http://${USER}:${encodeURIComponent(PASSWORD)}@127.0.0.1:9/`],
      /--target must not carry credentials \("http:\/\/«redacted»@127\.0\.0\.1:9\/"\): give them with --user and --password/,
    ],
  ];
  for (const [name, args, message] of cases) {
    test.concurrent(`${name}: exit 2 with one line, no work done`, async () => {
      const r = await pmv6(args);
      expectWellBehaved(r);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
    }, 120_000);
  }

  // EACCES needs a user other than root, and that user must be able to reach the checkout: a clone
  // below a private folder (mktemp -d is 0700) cannot be run by it, which proves nothing here.
  const root = process.getuid?.() === 0;
  test.runIf(root && othersCanReach(BIN))(
    '--report-dir without write permission, as a non-root user (EACCES): exit 2 with one line',
    async () => {
      const locked = join(dir, 'locked');
      mkdirSync(locked);
      chmodSync(dir, 0o755);
      chmodSync(locked, 0o555);
      const r = await pmv6(['run', '--report-dir', join(locked, 'reports')], { HOME: '/tmp' }, { uid: 65534 });
      expectWellBehaved(r);
      expect(r.stderr).toMatch(/cannot write --report-dir .*locked\/reports: EACCES/);
    },
    120_000,
  );
});
