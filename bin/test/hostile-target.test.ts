import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { megabytes, type TreeMemory, treeMemoryText, watchTreeMemory } from '../../suites/runner/process-memory.ts';
import { changedSince, type Installation, runObjects, snapshot, startInstallation } from './hostile/installation.ts';
import { type Behaviour, echoForms, type Hostile, kindOf, startHostile, startRecorder } from './hostile/proxy.ts';
import { slots } from './slots.ts';
import { BIN } from './spawn-cli.ts';

// Issue 24's acceptance: `pmv6 run`, as a child process, against a hostile proxy in front of the
// reference server (bin/test/hostile/README.md), one misbehaviour per case. After every case: no
// object that existed before the run is changed or deleted (read from the server's database, not
// through the proxy); nothing reached another origin; the settings are as before, or each one
// that is not is printed; the printed leftover count is what the server holds; the peak RSS of
// the CLI's process tree stays under 300 MB; the CLI ends within the bound; no form of any
// secret is in the console or a report file.

/**
 * With V8's heap kept to twice its live size (bin/pmv6.js) the heaviest cases peak at 160–162 MB
 * (1 MB on every GET) and 202–208 MB (every secret echoed), 234–329 and 233–243 MB before
 * (2026-11-27, loaded machine, npm run bench:memory).
 */
const RSS_LIMIT = 300 * 1024 * 1024;
/** --timeout of every case: short, so the cases that wait on deadlines stay fast. */
const TIMEOUT_MS = 2_000;
/**
 * A guard that every case ends at all: a few selected areas take 5 to 30 s here, several times
 * that on a machine loaded many times over. The bound the CLI states for a target that stops
 * answering is checked apart, against the target's last answer (statedHangBoundMs).
 */
const WALL_MS = 300_000;
/** Beyond the hang bound the CLI states: its process's exit, and this test's view of it. */
const HANG_SLACK_MS = 3_000;
/** A case's own deadline: it may wait for a slot behind the others first. */
const TEST_MS = 600_000;
/** Children at once: more only queue for the 2 shared cores. */
const AT_ONCE = 2;

const PASSWORD = `p"w\\%+/é€-${randomBytes(6).toString('hex')}`;
const TOKEN = `ctl_"${randomBytes(8).toString('base64url')}\\`;

const dir = mkdtempSync(join(tmpdir(), 'pmv6-hostile-target-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const slot = slots(AT_ONCE);

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** When the CLI ended (epoch ms). */
  endedAt: number;
  memory: TreeMemory;
  files: Record<string, string>;
}

interface Case {
  inst: Installation;
  proxy: Hostile;
  recorder: Awaited<ReturnType<typeof startRecorder>>;
  /** The base path the proxy serves the target under, if any. */
  base?: string;
  /** The child once it runs (for signals sent from the proxy's hooks). */
  child?: ChildProcess;
  before: ReturnType<typeof snapshot>;
  settingsBefore: Record<string, unknown>;
}

async function setUp(behaviour: (inst: Installation, foreign: string) => Behaviour): Promise<Case> {
  const inst = await startInstallation(PASSWORD, TOKEN);
  const recorder = await startRecorder();
  const c = { inst, recorder } as Case;
  const b = behaviour(inst, recorder.url);
  c.proxy = await startHostile(inst.url, b);
  if (b.basePath) c.base = b.basePath;
  c.before = snapshot(inst.server);
  c.settingsBefore = await inst.settings();
  return c;
}

async function tearDown(c: Case): Promise<void> {
  if (c.child && c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
  await c.proxy.close();
  await c.recorder.close();
  await c.inst.close();
}

async function runCli(c: Case, args: string[], name: string): Promise<Outcome> {
  const release = await slot();
  const reports = join(dir, name);
  try {
    return await new Promise<Outcome>((resolve, reject) => {
      const started = Date.now();
      const child = spawn(
        process.execPath,
        [
          BIN,
          'run',
          '--target',
          `${c.proxy.url}${c.base ?? ''}`,
          '--control',
          `${c.proxy.url}${c.base ?? ''}/__control`,
          '--timeout',
          String(TIMEOUT_MS),
          '--report-dir',
          reports,
          '--concurrency',
          '2',
          ...args,
        ],
        {
          env: {
            ...process.env,
            PMV6_USER: c.inst.user,
            PMV6_PASSWORD: PASSWORD,
            PMV6_CONTROL_TOKEN: TOKEN,
            PMV6_HMAC_PUBLIC: c.inst.hmac.publicKey,
            PMV6_HMAC_PRIVATE: c.inst.hmac.privateKey,
            PMV6_DEBUG: '',
            NO_COLOR: '1',
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      c.child = child;
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      const memory = watchTreeMemory(child.pid!);
      const kill = setTimeout(() => child.kill('SIGKILL'), WALL_MS + 60_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(kill);
        const files: Record<string, string> = {};
        try {
          for (const f of readdirSync(reports)) files[f] = readFileSync(join(reports, f), 'utf8');
        } catch {
          // no report written (an interrupted run, or one that ended before its reports)
        }
        const outcome = { code, stdout, stderr, ms: Date.now() - started, endedAt: Date.now(), memory: memory.stop(), files };
        // PMV6_HOSTILE_SHOW=1 prints what each case's CLI printed, passed or not.
        if (process.env.PMV6_HOSTILE_SHOW) console.log(`--- ${name}\n${context(outcome)}`);
        resolve(outcome);
      });
    });
  } finally {
    release();
  }
}

const context = (r: Outcome) =>
  `exit ${r.code} after ${r.ms} ms, process tree ${treeMemoryText(r.memory)}\nstderr: ${r.stderr.slice(-1500)}\nstdout: ${r.stdout.slice(-2500)}`;

/**
 * The leftover count the CLI printed on its last cleanup line: exact, or a lower bound when it
 * says some lists could not be read ("at least M left over (unknown: …)").
 */
function printedLeftovers(r: Outcome): { count: number; atLeast: boolean } | undefined {
  const all = [...`${r.stdout}\n${r.stderr}`.matchAll(/(at least )?(\d+) left over/g)];
  const last = all[all.length - 1];
  return last ? { count: Number(last[2]), atLeast: last[1] !== undefined } : undefined;
}

/** The bound the CLI states for a target that stops answering, in ms after its last answer. */
function statedHangBoundMs(r: Outcome): number | undefined {
  const m = /ends the run within (\d+) s after its last answer/.exec(r.stdout);
  return m ? Number(m[1]) * 1000 : undefined;
}

/**
 * Every acceptance item of issue 24 that must hold after any case, as the list of those that do
 * not (all of them, not only the first, so one run of a case says everything that is wrong).
 */
async function problems(c: Case, r: Outcome, opts: { codes?: number[] } = {}): Promise<string[]> {
  const out: string[] = [];
  const output = `${r.stdout}\n${r.stderr}`;
  if (r.ms >= WALL_MS) out.push(`the CLI ended after ${r.ms} ms, not within ${WALL_MS} ms`);
  if (opts.codes && !opts.codes.includes(r.code ?? -1)) out.push(`exit ${r.code}, not ${opts.codes.join(' or ')}`);
  if (r.memory.peak >= RSS_LIMIT) out.push(`the process tree's peak RSS ${treeMemoryText(r.memory)}, not under ${megabytes(RSS_LIMIT)}`);
  const trace = /\n\s+at .*\(.*:\d+:\d+\)|\bat file:\/\//.exec(output)?.[0];
  if (trace) out.push(`a stack trace in the output: ${trace}`);
  for (const change of changedSince(c.inst.server, c.before)) out.push(`a pre-existing object changed or deleted: ${change}`);
  for (const q of c.recorder.requests) {
    out.push(`a request reached another origin: ${q.method} ${q.url}${q.headers.authorization ? ' with credentials' : ''}`);
  }
  for (const q of c.proxy.outside.filter((o) => o.authorization)) out.push(`a request with credentials left the base path: ${q.method} ${q.url}`);
  const settingsAfter = await c.inst.settings();
  // A setting not as before is printed first and loudly, one "!!!" line each, with the request
  // that puts it back.
  for (const k of Object.keys(c.settingsBefore)) {
    const printed = new RegExp(`^!!!\\s+${k}: `, 'm').test(r.stderr) && /^!!! put them back with/m.test(r.stderr);
    if (JSON.stringify(settingsAfter[k]) !== JSON.stringify(c.settingsBefore[k]) && !printed) {
      out.push(`setting ${k} left at ${JSON.stringify(settingsAfter[k])} (was ${JSON.stringify(c.settingsBefore[k])}) and not printed with its restore`);
    }
  }
  const held = runObjects(c.inst.server, c.before);
  const printed = printedLeftovers(r);
  const truthful = printed && (printed.atLeast ? held.length >= printed.count : held.length === printed.count);
  if ((printed !== undefined || held.length > 0) && !truthful) {
    const said = printed ? `${printed.atLeast ? 'at least ' : ''}${printed.count}` : 'no';
    out.push(`printed ${said} left over; the target holds ${held.length}: ${held.map((h) => `${h.kind} ${h.id} ${h.name}`).join(', ')}`);
  }
  out.push(...leaks(c, r));
  return out;
}

/** Forms of any secret the run had or saw, in the console or in any report file. */
function leaks(c: Case, r: Outcome): string[] {
  const secrets = [PASSWORD, TOKEN, c.inst.hmac.privateKey, `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`, ...c.proxy.observed];
  const outputs: Array<[string, string]> = [['stdout', r.stdout], ['stderr', r.stderr], ...Object.entries(r.files)];
  const out: string[] = [];
  for (const secret of secrets) {
    for (const form of echoForms(secret)) {
      if (form.length < 8) continue;
      for (const [where, text] of outputs) {
        const at = text.indexOf(form);
        const n = text.split(form).length - 1;
        if (at >= 0) out.push(`${where} holds a form of a secret ${n} times (${form}), first: …${text.slice(Math.max(0, at - 120), at + form.length + 60)}…`);
      }
    }
  }
  return out;
}

/** The settings the CLI changes and the proxy's hooks watch for. */
const maintenanceOn = (method: string, path: string, body: string) =>
  method === 'PUT' && path === '/__control/settings' && /"maintenance_mode"\s*:\s*true/.test(body);
const maintenanceOff = (method: string, path: string, body: string) =>
  method === 'PUT' && path === '/__control/settings' && /"maintenance_mode"\s*:\s*false/.test(body);

describe('pmv6 run against a hostile target (issue 24)', () => {
  test.concurrent(
    'creation replies carry the ids of pre-existing objects (and one above 2^53): nothing pre-existing is changed or deleted',
    async () => {
      const c = await setUp((inst) => ({
        rewriteCreations: { victims: inst.victims, perKind: 2, big: inst.victims.bigVictim },
      }));
      try {
        const r = await runCli(c, ['--only', 'OPS,RES'], 'ids');
        const found = await problems(c, r);
        // Each foreign id is reported, not only left alone.
        for (const { kind, id } of c.proxy.rewritten)
          if (!r.stdout.includes(`not touched: ${kind} ${id}:`)) found.push(`${kind} ${id} not reported as not touched`);
        expect(found, context(r)).toEqual([]);
      } finally {
        await tearDown(c);
      }
    },
    TEST_MS,
  );

  test.concurrent(
    'Link targets on another origin: no request reaches it',
    async () => {
      const c = await setUp((_inst, foreign) => ({ foreignLinks: foreign }));
      try {
        const r = await runCli(c, ['--only', 'PAG'], 'links');
        expect(await problems(c, r), context(r)).toEqual([]);
      } finally {
        await tearDown(c);
      }
    },
    TEST_MS,
  );

  test.concurrent(
    'Link targets on the same origin outside the base path: no request with credentials leaves it',
    async () => {
      const c = await setUp(() => ({ basePath: '/pm', linksOutsideBase: true }));
      try {
        const r = await runCli(c, ['--only', 'PAG'], 'links-base');
        expect(await problems(c, r), context(r)).toEqual([]);
      } finally {
        await tearDown(c);
      }
    },
    TEST_MS,
  );

  /** What a case has seen of the run so far, for the moment to send SIGINT. */
  interface Seen {
    maintenance: boolean;
    maintenanceWasOn: boolean;
    creations: number;
  }
  const api = (p: string) => p.startsWith('/index.php/api/v6/');
  const moments: Array<[string, (method: string, path: string, body: string, seen: Seen) => boolean, Behaviour['delay']?]> = [
    ['as maintenance is turned on', maintenanceOn],
    ['while maintenance is on', (m, p, _b, seen) => seen.maintenance && m === 'GET' && api(p)],
    ['as maintenance is turned off', maintenanceOff],
    ['while the request turning maintenance on is in flight (applied 1.5 s later)', maintenanceOn, { match: maintenanceOn, ms: 1_500 }],
    [
      'while creations are in flight (each applied 1.5 s later)',
      (m, p, _b, seen) => kindOf(m, p) !== undefined && ++seen.creations === 5,
      { match: (m, p) => kindOf(m, p) !== undefined, ms: 1_500 },
    ],
    // The file's cleanup, after its maintenance section.
    ['during the cleanup', (m, p, _b, seen) => m === 'DELETE' && api(p) && seen.maintenanceWasOn],
  ];
  for (const [moment, when, delay] of moments) {
    test.concurrent(
      `Ctrl-C ${moment}: maintenance off, settings as before or printed, leftovers true`,
      async () => {
        let sent = false;
        const seen: Seen = { maintenance: false, maintenanceWasOn: false, creations: 0 };
        const c: Case = await setUp(() => ({
          ...(delay ? { delay } : {}),
          onRequest: (method, path, body) => {
            if (maintenanceOn(method, path, body)) seen.maintenance = true;
            if (!sent && when(method, path, body, seen)) {
              sent = true;
              c.child?.kill('SIGINT');
            }
            if (maintenanceOff(method, path, body)) {
              seen.maintenance = false;
              seen.maintenanceWasOn = true;
            }
          },
        }));
        try {
          const r = await runCli(c, ['--only', 'ERR'], `sigint-${moment.replace(/\W+/g, '-')}`);
          expect(sent, `the moment came: ${context(r)}`).toBe(true);
          const found = await problems(c, r, { codes: [130] });
          // Whatever was printed: maintenance on locks every user out.
          if ((await c.inst.settings()).maintenance_mode !== false) found.push('maintenance mode left on');
          expect(found, context(r)).toEqual([]);
        } finally {
          await tearDown(c);
        }
      },
      TEST_MS,
    );
  }

  test.concurrent(
    "the start-of-run settings read fails (the first is the preflight's): no setting changed, and the run says so",
    async () => {
      const c = await setUp(() => ({ failSettingsReads: [2] }));
      try {
        const r = await runCli(c, ['--only', 'ERR,EP'], 'settings-read');
        const found = await problems(c, r);
        if (!/settings: could not be read at the start of the run/.test(r.stdout + r.stderr)) found.push('the failed read is not said');
        const writes = c.proxy.seen.filter((s) => s === 'PUT /__control/settings').length;
        if (writes > 0) found.push(`${writes} settings changes sent without the settings of the start of the run`);
        expect(found, context(r)).toEqual([]);
      } finally {
        await tearDown(c);
      }
    },
    TEST_MS,
  );

  test.concurrent(
    'every restore of a changed setting fails: each setting not as before is printed with the request that restores it',
    async () => {
      let writes = 0;
      const c = await setUp(() => ({
        // The first change goes through; every later write, its restore included, fails.
        failSettingsWrites: [2, 3, 4, 5, 6, 7, 8],
        onRequest: (method, path) => {
          if (method === 'PUT' && path === '/__control/settings') writes++;
        },
      }));
      try {
        const r = await runCli(c, ['--only', 'ERR'], 'settings-restore');
        expect(await problems(c, r), context(r)).toEqual([]);
        expect(writes, context(r)).toBeGreaterThan(1);
      } finally {
        await tearDown(c);
      }
    },
    TEST_MS,
  );

  test.concurrent(
    'the target stops answering mid-run: the CLI ends within the bound it states and its leftover count is true',
    async () => {
      const c = await setUp(() => ({ hangAfter: 60 }));
      try {
        const r = await runCli(c, ['--only', 'OPS'], 'hang');
        const found = await problems(c, r, { codes: [2] });
        const bound = statedHangBoundMs(r);
        const last = c.proxy.lastAnswerAt();
        if (bound === undefined) found.push('no bound stated for a target that stops answering');
        // Decision: HANG_SLACK_MS for what the bound cannot cover (the process's exit, the
        // sampling of this test on a loaded machine).
        else if (last !== undefined && r.endedAt - last > bound + HANG_SLACK_MS) {
          found.push(`ended ${r.endedAt - last} ms after the target's last answer; the CLI states ${bound} ms`);
        }
        expect(found, context(r)).toEqual([]);
      } finally {
        await tearDown(c);
      }
    },
    TEST_MS,
  );

  test.concurrent(
    '1 MB bodies on every GET',
    async () => {
      const c = await setUp(() => ({ padGets: 1024 * 1024 }));
      try {
        const r = await runCli(c, ['--only', 'PAG,VER'], 'big-bodies');
        expect(await problems(c, r), context(r)).toEqual([]);
      } finally {
        await tearDown(c);
      }
    },
    TEST_MS,
  );

  test.concurrent(
    'a 14 KB Link header with 1,500 empty parameters on every list page',
    async () => {
      const c = await setUp(() => ({ longLink: 1_500 }));
      try {
        const r = await runCli(c, ['--only', 'PAG'], 'long-link');
        expect(await problems(c, r), context(r)).toEqual([]);
      } finally {
        await tearDown(c);
      }
    },
    TEST_MS,
  );

  test.concurrent(
    'JSON nested 100,000 deep: judged as the server’s, no crash',
    async () => {
      const c = await setUp(() => ({ deepJson: { depth: 100_000, path: /^(projects|passwords)\.json$|^projects\/\d+\.json$/ } }));
      try {
        const r = await runCli(c, ['--only', 'RES,VER'], 'deep-json');
        const found = await problems(c, r, { codes: [1] });
        const results = JSON.parse(r.files['results.json'] ?? '{}') as { harnessErrors?: string[] };
        for (const e of results.harnessErrors ?? []) found.push(`a harness error, not the server's violation: ${e.slice(0, 300)}`);
        expect(found, context(r)).toEqual([]);
      } finally {
        await tearDown(c);
      }
    },
    TEST_MS,
  );

  test.concurrent(
    'every secret echoed in every encoding, in bodies and headers: none in any output',
    async () => {
      let c: Case | undefined;
      c = await setUp(() => ({
        echo: () => [PASSWORD, TOKEN, ...(c ? [c.inst.hmac.privateKey, ...c.proxy.observed] : [])],
      }));
      try {
        const r = await runCli(c, ['--only', 'VER,ERR,AUTH'], 'echo');
        const found = await problems(c, r);
        for (const f of ['results.json', 'junit.xml', 'report.html', 'summary.md']) if (!(f in r.files)) found.push(`no ${f} written`);
        // The echoes reached the outputs, redacted: the case proves something.
        if (!/«redacted/.test(r.files['results.json'] ?? '')) found.push('results.json shows no redacted echo');
        expect(found, context(r)).toEqual([]);
      } finally {
        await tearDown(c);
      }
    },
    TEST_MS,
  );
});
