// Runs a k6 script of load/k6/ in Node for tests: a worker thread executes the script's init code,
// setup(), the default function for a few iterations, teardown() and handleSummary(); every
// http call blocks (Atomics.wait) while this thread performs it with undici and records it.
// The script's k6 imports are pointed at ./modules/ in a copy of load/k6/; nothing else changes.
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MessageChannel, Worker } from 'node:worker_threads';
import { Agent, request } from 'undici';

export interface RecordedExchange {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  tags: Record<string, string>;
  status: number;
  responseHeaders: Record<string, string | string[] | undefined>;
}

export interface StandinResult {
  exchanges: RecordedExchange[];
  checks: Array<{ name: string; pass: boolean; tags: Record<string, string> }>;
  files: Record<string, string>;
  options: { scenarios?: Record<string, Record<string, unknown>>; thresholds?: Record<string, string[]> } | undefined;
  setupData: unknown;
  error: string | undefined;
}

const HERE = dirname(fileURLToPath(import.meta.url));
const K6_DIR = join(HERE, '..', '..', 'k6');
const MODULES = ['k6/http', 'k6/crypto', 'k6/encoding', 'k6/execution', 'k6'] as const;

function rewriteImports(dir: string): void {
  for (const name of readdirSync(dir)) {
    const file = join(dir, name);
    if (statSync(file).isDirectory()) rewriteImports(file);
    else if (name.endsWith('.js')) {
      let text = readFileSync(file, 'utf8');
      for (const m of MODULES) {
        const target = pathToFileURL(join(HERE, 'modules', `${m === 'k6' ? 'k6' : m.slice(3)}.js`)).href;
        text = text.replaceAll(`from '${m}'`, `from '${target}'`);
      }
      writeFileSync(file, text);
    }
  }
}

export async function runK6Script(
  script: string,
  opts: { env: Record<string, string>; iterations: number; ca?: string },
): Promise<StandinResult> {
  const copy = mkdtempSync(join(tmpdir(), 'pmv6-k6-'));
  cpSync(K6_DIR, copy, { recursive: true });
  rewriteImports(copy);
  const dispatcher = new Agent(opts.ca ? { connect: { ca: opts.ca } } : {});
  const exchanges: RecordedExchange[] = [];
  const signal = new SharedArrayBuffer(4);
  const flag = new Int32Array(signal);
  const { port1, port2 } = new MessageChannel();
  port1.on('message', (req: { method: string; url: string; headers: Record<string, string>; body: string; tags: Record<string, string> }) => {
    void (async () => {
      let answer: { status: number; headers: Record<string, string | string[] | undefined>; body: string; error?: string };
      try {
        const res = await request(req.url, {
          method: req.method as 'GET',
          headers: req.headers,
          dispatcher,
          ...(req.body === '' ? {} : { body: req.body }),
        });
        answer = { status: res.statusCode, headers: res.headers, body: await res.body.text() };
      } catch (e) {
        answer = { status: 0, headers: {}, body: '', error: (e as Error).message };
      }
      exchanges.push({ ...req, status: answer.status, responseHeaders: answer.headers });
      port1.postMessage(answer);
      Atomics.store(flag, 0, 1);
      Atomics.notify(flag, 0);
    })();
  });
  const scenarioName = basename(script, '.js');
  const worker = new Worker(join(HERE, 'worker.mjs'), {
    workerData: {
      script: join(copy, relative(K6_DIR, script)),
      scriptDir: dirname(script),
      env: opts.env,
      iterations: opts.iterations,
      port: port2,
      signal,
      scenarioName,
    },
    transferList: [port2],
  });
  try {
    const result = await new Promise<Omit<StandinResult, 'exchanges'>>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`k6 stand-in worker exited with ${code}`)));
    });
    return { ...result, exchanges };
  } finally {
    port1.close();
    await worker.terminate();
    await dispatcher.close();
    rmSync(copy, { recursive: true, force: true });
  }
}
