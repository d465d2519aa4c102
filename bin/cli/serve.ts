import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { UsageError } from '../../core/errors.ts';
import { createReferenceServer, DEFAULT_TIMEOUTS, type Timeouts } from '../../fixtures/reference-server/src/index.ts';
import { intOption, parse } from './args.ts';
import { namedVariants } from './variant-option.ts';

const HELP = `pmv6 serve: run the reference v6 server in the foreground

Options:
  --host HOST              address to bind (or PMV6_HOST; default 127.0.0.1)
  --port PORT              port (or PORT; default 8080; 0 picks a free one)
  --db FILE                SQLite database file (default: in memory, lost on exit); uploaded
                           files are kept in the folder FILE.files/ beside it
  --admin-user NAME        the admin's username (or PMV6_ADMIN_USER; default admin)
  --admin-password P       the admin's password (or PMV6_ADMIN_PASSWORD; default: generated and
                           printed once). Ignored when FILE already holds the admin.
  --control-token T        serve the control protocol at {base}/__control with this bearer token
                           (or PMV6_CONTROL_TOKEN; default: control protocol off)
  --hmac-window SECONDS    accepted HMAC timestamp skew (default 300)
  --tls-cert FILE          serve https with this certificate (PEM); needs --tls-key
  --tls-key FILE           the certificate's private key (PEM)
  --no-response-cache      compute every GET list page and count (default: answers are cached
                           in memory, up to 64 MiB, and dropped on every write)
  --header-timeout SECONDS a request's line and headers must arrive within this time, else 408
                           (default 10)
  --request-timeout SECONDS
                           a whole request, body included, must arrive within this time, else
                           408 (default 120; at least the header timeout)
  --variant IDS            make these lawful choices the spec leaves open (fixtures/variants/;
                           pmv6 variants --list), comma-separated
  --idle-timeout SECONDS   a connection without traffic is closed after this time (default 30)

Stops cleanly on SIGINT or SIGTERM. Exit codes: 0 stopped, 2 usage error, 4 could not start.`;

export async function serve(argv: string[]): Promise<number> {
  const { values } = parse(argv, {
    host: { type: 'string' },
    port: { type: 'string' },
    db: { type: 'string' },
    'admin-user': { type: 'string' },
    'admin-password': { type: 'string' },
    'control-token': { type: 'string' },
    'hmac-window': { type: 'string' },
    'tls-cert': { type: 'string' },
    'tls-key': { type: 'string' },
    'no-response-cache': { type: 'boolean' },
    'header-timeout': { type: 'string' },
    'request-timeout': { type: 'string' },
    'idle-timeout': { type: 'string' },
    variant: { type: 'string' },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  // The environment fallbacks let the container image (Dockerfile) be configured by `docker run -e`.
  const env = process.env;
  const host = values.host ?? (env.PMV6_HOST || '127.0.0.1');
  const adminUser = values['admin-user'] ?? (env.PMV6_ADMIN_USER || 'admin');
  const port = intOption('port', values.port ?? (env.PORT || undefined), 0, 65535) ?? 8080;
  if (Boolean(values['tls-cert']) !== Boolean(values['tls-key'])) throw new UsageError('give both --tls-cert and --tls-key, or neither');
  let tls: { key: string; cert: string } | undefined;
  if (values['tls-cert'] && values['tls-key']) {
    try {
      tls = { cert: readFileSync(values['tls-cert'], 'utf8'), key: readFileSync(values['tls-key'], 'utf8') };
    } catch (e) {
      throw new UsageError(`cannot read the TLS files: ${(e as Error).message}`);
    }
  }
  const hmacWindowSeconds = intOption('hmac-window', values['hmac-window'], 1, 86_400);
  const timeouts: Partial<Timeouts> = {};
  const headerS = intOption('header-timeout', values['header-timeout'], 1, 86_400);
  const requestS = intOption('request-timeout', values['request-timeout'], 1, 86_400);
  const idleS = intOption('idle-timeout', values['idle-timeout'], 1, 86_400);
  if (headerS !== undefined) timeouts.headersMs = headerS * 1000;
  if (requestS !== undefined) timeouts.requestMs = requestS * 1000;
  if (idleS !== undefined) timeouts.idleMs = idleS * 1000;
  if ((timeouts.headersMs ?? DEFAULT_TIMEOUTS.headersMs) > (timeouts.requestMs ?? DEFAULT_TIMEOUTS.requestMs)) {
    throw new UsageError('--header-timeout cannot be longer than --request-timeout');
  }
  const given = values['admin-password'] ?? process.env.PMV6_ADMIN_PASSWORD;
  const existingDb = values.db !== undefined && existsSync(values.db);
  const adminPassword = given ?? randomBytes(12).toString('base64url');
  const controlToken = values['control-token'] ?? process.env.PMV6_CONTROL_TOKEN;

  const variants = values.variant === undefined ? [] : await namedVariants(values.variant);
  let server: Awaited<ReturnType<typeof createReferenceServer>> | undefined;
  let base: string;
  try {
    server = await createReferenceServer({
      adminUser,
      adminPassword,
      ...(values.db !== undefined ? { dbFile: values.db } : {}),
      ...(controlToken ? { controlToken } : {}),
      ...(hmacWindowSeconds !== undefined ? { hmacWindowSeconds } : {}),
      ...(tls ? { tls } : {}),
      ...(values['no-response-cache'] ? { responseCache: false } : {}),
      timeouts,
    });
    for (const v of variants) v.apply(server);
    base = await server.listen({ host, port });
  } catch (e) {
    process.stderr.write(`pmv6 serve: could not start: ${(e as Error).message}\n`);
    await server?.close().catch(() => {});
    return 4;
  }
  process.stdout.write(`pmv6 reference server listening on ${base}\n`);
  process.stdout.write(`API base: ${base}/index.php/api/v6/\n`);
  if (controlToken) process.stdout.write(`control protocol: ${base}/__control\n`);
  if (given === undefined && !existingDb) {
    process.stdout.write(`admin user "${adminUser}" password (shown once): ${adminPassword}\n`);
  } else if (given === undefined) {
    process.stdout.write(`admin password: unchanged (kept in ${values.db})\n`);
  }
  process.stdout.write(values.db ? `data: ${values.db} (files: ${values.db}.files/)\n` : 'data: in memory (lost on exit; use --db FILE to keep it)\n');

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.close();
  process.stdout.write('pmv6 reference server stopped\n');
  return 0;
}
