import { describe, expect, test } from 'vitest';
import { pace, progress } from '../console.ts';

describe('live progress line', () => {
  test('pace: requests, their rate, the file running and the time left from the files done', () => {
    expect(pace({ requests: 950, filesDone: 10, filesTotal: 40, elapsedMs: 10_000 })).toBe('950 requests, 95/s, file 11/40, about 30 s left');
    expect(pace({ requests: 0, filesDone: 0, filesTotal: 40, elapsedMs: 0 })).toBe('0 requests, 0/s, file 1/40');
    expect(pace({ requests: 4000, filesDone: 40, filesTotal: 40, elapsedMs: 20_000 })).toBe('4000 requests, 200/s, file 40/40');
  });

  test('on a terminal the line shows the pace; elsewhere only the per-file lines are written', () => {
    const written: string[] = [];
    const tty = { isTTY: true, columns: 200, write: (s: string) => written.push(s) > 0 } as unknown as NodeJS.WriteStream;
    const bar = progress(tty, { quiet: false, clean: (s) => s });
    bar.test({ title: 't', file: 'suites/pagination/links.test.ts', clauses: ['PAG-03'], level: 'MUST', outcome: 'pass', durationMs: 1 });
    bar.tick({ requests: 120, filesDone: 2, filesTotal: 4, elapsedMs: 2_000 });
    expect(written.join('')).toMatch(/1 tests: 1 ok \| 120 requests, 60\/s, file 3\/4, about 2 s left {2}pagination\/links\.test\.ts/);

    const piped: string[] = [];
    const pipe = { isTTY: false, write: (s: string) => piped.push(s) > 0 } as unknown as NodeJS.WriteStream;
    const plain = progress(pipe, { quiet: false, clean: (s) => s });
    plain.tick({ requests: 120, filesDone: 2, filesTotal: 4, elapsedMs: 2_000 });
    expect(piped.join('')).toBe('');
  });
});
