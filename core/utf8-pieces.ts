/**
 * UTF-16 units of text in each piece. Decision: 64 Ki units (at most 192 KiB of UTF-8), a few
 * TLS records' worth: large enough that a body of megabytes is a few dozen writes, small enough
 * that no piece is a large object of V8's or a mapping of its own in malloc.
 */
export const PIECE_CHARS = 64 * 1024;

/**
 * The UTF-8 bytes of `text` in pieces of at most `chars` UTF-16 units, never splitting a
 * surrogate pair: the pieces one after another are exactly `Buffer.from(text, 'utf8')` (a lone
 * surrogate is U+FFFD there as here), without that copy of the whole text ever being made.
 */
export function* utf8Pieces(text: string, chars = PIECE_CHARS): Generator<Buffer> {
  if (chars < 2) throw new RangeError('utf8Pieces: a piece holds at least 2 UTF-16 units (a surrogate pair)');
  for (let at = 0; at < text.length; ) {
    let end = Math.min(at + chars, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    yield Buffer.from(text.slice(at, end), 'utf8');
    at = end;
  }
}
