import { createHmac, createHash } from 'node:crypto';

export function hmac(algorithm, key, data, encoding) {
  return createHmac(algorithm, Buffer.from(key, 'utf8')).update(Buffer.from(data, 'utf8')).digest(encoding);
}

export function sha256(data, encoding) {
  return createHash('sha256').update(data).digest(encoding);
}

export default { hmac, sha256 };
