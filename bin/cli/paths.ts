import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, open, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { UsageError } from '../../core/errors.ts';

// Every path the CLI writes or reads is checked before any work, so a bad one is one line and
// exit 2 up front, never a stack trace after the run.

function why(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  return err.code ?? err.message;
}

async function kind(path: string): Promise<'file' | 'dir' | 'other' | 'missing'> {
  try {
    const s = await stat(path);
    return s.isDirectory() ? 'dir' : s.isFile() ? 'file' : 'other';
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'missing';
    if (code === 'ENOTDIR') throw new Error('ENOTDIR (a part of the path is a file)');
    throw e;
  }
}

/** Decision: directories are made one level at a time (Node's recursive mkdir never returns under /proc). */
async function makeDirs(dir: string): Promise<void> {
  const missing: string[] = [];
  let at = resolve(dir);
  for (;;) {
    const k = await kind(at);
    if (k === 'dir') break;
    if (k !== 'missing') throw new Error(`${at} is not a directory`);
    missing.unshift(at);
    const up = dirname(at);
    if (up === at) break;
    at = up;
  }
  for (const d of missing) await mkdir(d);
}

/** Creates and removes a probe file: the only check that holds for read-only mounts, /proc and ACLs. */
async function probe(dir: string): Promise<void> {
  const file = join(dir, `.pmv6-write-check-${randomBytes(4).toString('hex')}`);
  const handle = await open(file, 'wx');
  await handle.close();
  await rm(file, { force: true });
}

/** A folder the command will write into: made now if missing, and shown writable. */
export async function checkOutputDir(flag: string, dir: string): Promise<void> {
  try {
    await makeDirs(dir);
    await probe(dir);
  } catch (e) {
    throw new UsageError(`cannot write ${flag} ${dir}: ${why(e)}`);
  }
}

/** A file the command will write (or append to): its folder must exist and take a new file; an existing one must be a writable file. */
export async function checkOutputFile(flag: string, file: string): Promise<void> {
  try {
    const k = await kind(file);
    if (k === 'dir') throw new Error('EISDIR (it is a directory)');
    if (k === 'other') throw new Error('not a regular file');
    if (k === 'file') {
      await access(file, constants.W_OK);
      return;
    }
    const parent = dirname(resolve(file));
    if ((await kind(parent)) !== 'dir') throw new Error(`ENOENT (no folder ${parent})`);
    await probe(parent);
  } catch (e) {
    throw new UsageError(`cannot write ${flag} ${file}: ${why(e)}`);
  }
}

/** A file the command will read: a regular file of at most `maxBytes` (never /dev/zero or a FIFO). */
export async function checkInputFile(flag: string, file: string, maxBytes = 64 * 1024 * 1024): Promise<void> {
  try {
    const s = await stat(file);
    if (s.isDirectory()) throw new Error('EISDIR (it is a directory)');
    if (!s.isFile()) throw new Error('not a regular file');
    if (s.size > maxBytes) throw new Error(`larger than ${maxBytes} bytes`);
    await access(file, constants.R_OK);
  } catch (e) {
    throw new UsageError(`cannot read ${flag} ${file}: ${why(e)}`);
  }
}
