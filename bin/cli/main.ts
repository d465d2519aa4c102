import { UsageError } from '../../core/errors.ts';
import { forTerminal } from '../../reporters/terminal.ts';

const COMMANDS: Record<string, { summary: string; load: () => Promise<(argv: string[]) => Promise<number>> }> = {
  run: { summary: 'run the conformance suites against a target (default: the embedded reference server)', load: async () => (await import('./run.ts')).run },
  cleanup: {
    summary: 'remove what earlier runs left on a target (from their journals and by name), put their settings back',
    load: async () => (await import('./cleanup.ts')).cleanup,
  },
  serve: { summary: 'run the reference v6 server in the foreground', load: async () => (await import('./serve.ts')).serve },
  clauses: { summary: 'list the clause catalogue (--json for machine use)', load: async () => (await import('./clauses.ts')).clauses },
  report: {
    summary: 'render summary.md, report.html and junit.xml from results.json, or --diff two runs',
    load: async () => (await import('./report.ts')).report,
  },
  mutants: {
    summary: 'run the kill matrix: the suites against every mutant of the reference server',
    load: async () => (await import('./mutants.ts')).mutants,
  },
  variants: {
    summary: 'run the suites against every lawful variant of the reference server: pmv6 must stay quiet',
    load: async () => (await import('./variants.ts')).variants,
  },
  clients: {
    summary: "the client conformance kit: check a client's requests, serve scenarios (serve, matrix)",
    load: async () => (await import('./clients.ts')).clients,
  },
  load: {
    summary: 'generate load from a scenario; thresholds decide the exit code; --baseline compares runs',
    load: async () => (await import('./load.ts')).load,
  },
};

export const USAGE = `pmv6: conformance suite and load harness for the Password Manager Service REST API v6

Usage: pmv6 <command> [options]     (pmv6 <command> --help for its options)

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(9)}${c.summary}`)
  .join('\n')}

Exit codes: 0 conformant / success, 1 violations, 2 usage error, unreachable target or rejected
credentials, 3 inconclusive (a harness error or failed setup, no violation), 4 server could not start.`;

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v') {
    const { readFile } = await import('node:fs/promises');
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    process.stdout.write(`${pkg.version}\n`);
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`pmv6: unknown command "${name}"; run pmv6 --help\n`);
    return 2;
  }
  try {
    return await (await command.load())(rest);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`pmv6 ${name}: ${forTerminal(e.message)}\n`);
      return 2;
    }
    // Decision: nothing reaches the user as a stack trace. A file-system error (a disk that filled
    // up during the run) is exit 2 like any unusable path; anything else is our own bug, exit 3.
    const err = e as NodeJS.ErrnoException;
    if (typeof err?.code === 'string' && typeof err.syscall === 'string') {
      process.stderr.write(`pmv6 ${name}: ${forTerminal(`cannot ${err.syscall} ${err.path ?? ''}: ${err.code}`)}\n`);
      return 2;
    }
    process.stderr.write(
      `pmv6 ${name}: internal error: ${forTerminal(String(err?.message ?? e).split('\n')[0] ?? '')}${process.env.PMV6_DEBUG ? `\n${forTerminal(String(err?.stack))}` : ' (PMV6_DEBUG=1 shows the stack)'}\n`,
    );
    return 3;
  }
}
