export function b64encode(input, encoding = 'std') {
  const s = Buffer.from(typeof input === 'string' ? input : new Uint8Array(input)).toString(encoding.startsWith('url') ? 'base64url' : 'base64');
  return encoding.endsWith('std') || encoding === 'url' ? s : s.replace(/=+$/, '');
}

export function b64decode(input, encoding = 'std', format) {
  const b = Buffer.from(input, encoding.startsWith('url') ? 'base64url' : 'base64');
  return format === 's' ? b.toString('utf8') : b.buffer.slice(b.byteOffset, b.byteOffset + b.length);
}

export default { b64encode, b64decode };
