import { expect, test } from 'vitest';
import { scrub } from '../../../core/redact.ts';
import { getRunConfig, registerRunSecrets } from '../config.ts';

test('getRunConfig explains a configuration the runner has not set (setRunConfig)', () => {
  expect(() => getRunConfig()).toThrow(/pmv6 run configuration missing/);
});

test('registerRunSecrets registers password, Basic credentials, private key and control token', () => {
  registerRunSecrets({
    target: 'http://h',
    user: 'admin',
    password: 'admin-pass-123',
    hmac: { publicKey: 'pub', privateKey: 'private-key-xyz' },
    control: { url: 'http://h/__control', token: 'token-abc-123' },
    runId: 'r',
    seed: 1,
    readOnly: false,
    timeoutMs: 1000,
  });
  expect(scrub(`admin-pass-123 ${Buffer.from('admin:admin-pass-123').toString('base64')} private-key-xyz token-abc-123`)).toBe(
    '«redacted:password» «redacted:password» «redacted:hmac private key» «redacted:control token»',
  );
});
