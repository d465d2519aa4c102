import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { UsageError } from '../../core/errors.ts';
import { urlOption } from '../cli/args.ts';
import { checkInputFile, checkOutputDir, checkOutputFile } from '../cli/paths.ts';

const dir = mkdtempSync(join(tmpdir(), 'pmv6-paths-'));
const file = join(dir, 'file');
writeFileSync(file, '{}');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('output folders', () => {
  test('a missing folder is made, level by level, and left without a probe file', async () => {
    const made = join(dir, 'a', 'b', 'c');
    await checkOutputDir('--report-dir', made);
    expect(existsSync(made)).toBe(true);
    await checkOutputDir('--report-dir', made);
  });

  test.each([
    ['a file', file, /^cannot write --report-dir .*file: .*is not a directory$/],
    ['a path under a file', join(file, 'sub'), /^cannot write --report-dir .*file\/sub: ENOTDIR/],
    ['a path under /proc', '/proc/x/y', /^cannot write --report-dir \/proc\/x\/y: ENOENT$/],
  ])('%s is a usage error of one line', async (_name, path, message) => {
    const e = await checkOutputDir('--report-dir', path).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(UsageError);
    expect((e as Error).message).toMatch(message);
  });
});

describe('output and input files', () => {
  test('a new file in an existing folder and an existing file are fine; nothing is left behind', async () => {
    await checkOutputFile('--out', join(dir, 'new.json'));
    expect(existsSync(join(dir, 'new.json'))).toBe(false);
    await checkOutputFile('--out', file);
    await checkInputFile('--baseline', file);
  });

  test.each([
    ['--out', () => checkOutputFile('--out', dir), /^cannot write --out .*: EISDIR/],
    ['--out', () => checkOutputFile('--out', join(dir, 'missing', 'x.json')), /^cannot write --out .*: ENOENT \(no folder/],
    ['--out', () => checkOutputFile('--out', '/proc/x'), /^cannot write --out \/proc\/x: /],
    ['--baseline', () => checkInputFile('--baseline', '/dev/zero'), /^cannot read --baseline \/dev\/zero: not a regular file$/],
    ['--baseline', () => checkInputFile('--baseline', dir), /EISDIR/],
    ['--baseline', () => checkInputFile('--baseline', file, 1), /larger than 1 bytes/],
    ['--baseline', () => checkInputFile('--baseline', join(dir, 'nope')), /: ENOENT$/],
  ])('%s: %s', async (_flag, check, message) => {
    const e = await check().catch((err: unknown) => err);
    expect(e).toBeInstanceOf(UsageError);
    expect((e as Error).message).toMatch(message);
  });
});

describe('URLs with credentials', () => {
  test('are refused with the hint, and the credentials are not shown', () => {
    for (const url of ['http://admin:s3cret@host:8080/pm', 'https://s3cret@host/', 'http://admin:s3%22cret@host']) {
      expect(() => urlOption('target', url)).toThrow(
        /^--target must not carry credentials \("https?:\/\/«redacted»@host.*"\): give them with --user and --password/,
      );
      try {
        urlOption('target', url);
      } catch (e) {
        expect((e as Error).message).not.toMatch(/s3/);
      }
    }
    expect(() => urlOption('target', 'http://a:s3cret@ho st')).toThrow(/got "http:\/\/«redacted»@ho st"/);
    expect(urlOption('target', 'http://host:8080/pm/')).toBe('http://host:8080/pm');
  });
});
