import { describe, expect, test } from 'vitest';
import { utf8Pieces } from '../utf8-pieces.ts';

const joined = (text: string, chars?: number) => Buffer.concat([...utf8Pieces(text, chars)]);

describe('utf8Pieces', () => {
  test('the pieces one after another are the UTF-8 of the whole text, pairs never split, lone surrogates as U+FFFD', () => {
    const texts = [
      '',
      'a',
      'ascii only',
      'é€✓',
      '😀😀😀',
      'a😀b😀',
      '\ud800',
      'x\ud800',
      '\udc00y',
      'a\ud83d',
      '\ud83d\ud83d\ude00',
      `${'😀'.repeat(5)}\ud800z`,
    ];
    for (const text of texts)
      for (const chars of [2, 3, 4, 5, 7, 64])
        expect(joined(text, chars).equals(Buffer.from(text, 'utf8')), `${JSON.stringify(text)} in pieces of ${chars}`).toBe(true);
  });

  test('no piece is longer than asked, each ends on a whole character', () => {
    const text = 'ab😀c'.repeat(100);
    for (const piece of utf8Pieces(text, 5)) {
      expect(piece.length).toBeLessThanOrEqual(5 * 3);
      expect(piece.toString('utf8')).not.toContain('\ufffd');
    }
  });

  test('a piece too small for a surrogate pair is refused', () => {
    expect(() => [...utf8Pieces('😀', 1)]).toThrow(RangeError);
  });
});
