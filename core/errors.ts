// The errors that end a command, and the exit code each leads to. Every layer may throw them;
// only the CLI turns them into an exit code.

/** Bad input to the CLI (a flag, a file, a path): one line, exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A target that cannot be tested or loaded (unreachable, not a v6 API, credentials refused): one line, exit 2. */
export class TargetError extends Error {
  override name = 'TargetError';
}

export const EXIT = { conformant: 0, violations: 1, usage: 2, inconclusive: 3 } as const;
