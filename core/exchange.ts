export interface Exchange {
  request: {
    method: string;
    url: string;
    headers: Record<string, string>;
    body?: string;
  };
  response?: {
    status: number;
    headers: Record<string, string | string[]>;
    body: string;
    /** false when the response bytes were not valid UTF-8 (body then holds U+FFFD replacements) */
    validUtf8?: boolean;
    /** true when the bytes began with a UTF-8 byte order mark (EF BB BF), which decoding strips */
    bom?: boolean;
  };
  /** parsed body when it parses */
  json?: unknown;
  /** transport error: no response was received */
  error?: string;
  durationMs: number;
}

export function headerValue(headers: Record<string, string | string[]> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === wanted) return Array.isArray(value) ? value.join(', ') : value;
  }
  return undefined;
}
