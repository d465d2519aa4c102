import { scrub } from '../core/redact.ts';

// XML 1.0 §2.2: Char ::= #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF].
// Decision: a character outside it (a C0 control, a lone surrogate, U+FFFE/U+FFFF) cannot be
// written even as a character reference, so it is shown as the text \xNN or \uNNNN; so are DEL
// and the C1 controls, which §2.2 asks documents to avoid (a CI log printing a failure message
// would pass them to a terminal).
const NOT_XML_CHAR = /[^\t\n\r\x20-\x7E\xA0-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

function visible(text: string): string {
  return text.replace(NOT_XML_CHAR, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** Character data: scrubbed of secrets, then escaped. */
export function xmlText(text: string): string {
  return visible(scrub(text)).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** An attribute value (double-quoted); line breaks and tabs survive attribute normalisation as references. */
export function xmlAttr(text: string): string {
  return xmlText(text).replace(/"/g, '&quot;').replace(/'/g, '&apos;').replace(/\t/g, '&#9;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;');
}

export function attrs(values: Record<string, string | number | undefined>): string {
  return Object.entries(values)
    .filter((e): e is [string, string | number] => e[1] !== undefined)
    .map(([k, v]) => ` ${k}="${xmlAttr(String(v))}"`)
    .join('');
}
