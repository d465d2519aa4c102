import { createHmac } from 'node:crypto';
import { PIECE_CHARS, utf8Pieces } from './utf8-pieces.ts';

export function basicAuthorization(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
}

export interface HmacInput {
  privateKey: string;
  /** raw request path after `index.php/`, no leading slash, with ?query as sent: `api/v6/passwords.json` */
  uri: string;
  timestamp: string | number;
  body: string | Buffer;
}

/**
 * product-facts §2.2: hash = hmac_sha256(key=private_key.encode(), msg=(uri + timestamp + body)).hexdigest()
 * The key is the UTF-8 bytes of the key string (not hex-decoded); the body is the exact bytes sent.
 */
export function hmacSign({ privateKey, uri, timestamp, body }: HmacInput): string {
  const hmac = createHmac('sha256', Buffer.from(privateKey, 'utf8')).update(Buffer.from(`${uri}${timestamp}`, 'utf8'));
  // A long text body is hashed piece by piece: a body of megabytes is never copied whole for its hash.
  if (typeof body !== 'string') hmac.update(body);
  else if (body.length <= PIECE_CHARS) hmac.update(body, 'utf8');
  else for (const piece of utf8Pieces(body)) hmac.update(piece);
  return hmac.digest('hex');
}

export function hmacHeaders(input: HmacInput & { publicKey: string }): Record<string, string> {
  return {
    'X-Public-Key': input.publicKey,
    'X-Request-Hash': hmacSign(input),
    'X-Request-Timestamp': String(input.timestamp),
  };
}
