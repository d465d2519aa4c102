// core/signed-uri.js is the one signedUri: the harness, the native engine and the k6 scripts
// import it (k6 by relative path).
import { describe, expect, test } from 'vitest';
import { signedUri } from '../signed-uri.js';

describe('signedUri (core/signed-uri.js)', () => {
  test.each([
    ['http://h:1/index.php/api/v6/passwords.json', 'api/v6/passwords.json'],
    ['http://h:1/base/index.php/api/v6/passwords/search/a%20b.json?x=1&y=2', 'api/v6/passwords/search/a%20b.json?x=1&y=2'],
    ['https://h/index.php/api/v6/x.json#frag', 'api/v6/x.json'],
    ['https://h/index.php/api/v6/x.json?a=1#frag\nline two#again', 'api/v6/x.json?a=1'],
    ['http://h/other/path.json?index.php/q', 'other/path.json?index.php/q'],
    ['HTTPS://H.example/index.php/api/v6/version.json', 'api/v6/version.json'],
    ['/index.php/api/v6/passwords/page/2.json', 'api/v6/passwords/page/2.json'],
    ['/plain/path', 'plain/path'],
    ['http://h', ''],
  ])('%j → %j', (url, uri) => {
    expect(signedUri(url)).toBe(uri);
  });
});
