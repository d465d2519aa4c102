import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../pmv6.js', import.meta.url));

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export interface Served {
  base: string;
  password: string;
  token: string;
  child: ChildProcess;
  /** Everything the server printed to stdout so far. */
  output(): string;
}

/** `pmv6 serve` as a child process on a free loopback port, with the control protocol on. */
export async function serve(): Promise<Served> {
  const port = await freePort();
  const password = randomBytes(9).toString('base64url');
  const token = randomBytes(12).toString('base64url');
  const child = spawn(process.execPath, [BIN, 'serve', '--port', String(port)], {
    env: { ...process.env, PMV6_ADMIN_PASSWORD: password, PMV6_CONTROL_TOKEN: token },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 15_000);
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('listening on')) {
        clearTimeout(t);
        resolve();
      }
    });
  });
  return { base: `http://127.0.0.1:${port}`, password, token, child, output: () => out };
}
