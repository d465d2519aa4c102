import { scrub } from '../core/redact.ts';

/**
 * Decision: what a server or a client sent never reaches a terminal with its control characters
 * raw (an ANSI escape sequence in a name could move the cursor, recolour or hide lines, retitle
 * the window). C0 controls but tab and line feed, DEL and C1 controls are shown as `\xNN`;
 * Unicode's bidirectional overrides and isolates (which reorder what a line shows) as `\uNNNN`.
 * A backslash stays as it is: the text is for reading, not for decoding back.
 */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function terminalText(text: string): string {
  return text.replace(CONTROL, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** Text from a server or a client, for a terminal: secrets scrubbed, control characters shown. */
export function forTerminal(text: string): string {
  return terminalText(scrub(text));
}
