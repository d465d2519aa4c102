import { beforeEach, describe, expect, test } from 'vitest';
import type { Exchange } from '../../../core/exchange.ts';
import { clearSecrets, registerCredentials } from '../../../core/redact.ts';
import { basicAuthorization } from '../../../core/signers.ts';
import {
  expectErrorObject,
  expectHeader,
  expectJsonContentType,
  expectNoBody,
  expectSchema,
  expectStatus,
  formatExchange,
  keep,
  NoResponseError,
  SetupError,
  ViolationError,
  violation,
} from '../assert.ts';
import { failureRecord } from '../clause-test.ts';

const URL = 'http://127.0.0.1:8080/index.php/api/v6/passwords.json';

function ex(status: number | undefined, body = '', headers: Record<string, string | string[]> = { 'content-type': 'application/json' }): Exchange {
  const e: Exchange = {
    request: {
      method: 'POST',
      url: URL,
      headers: { 'Content-Type': 'application/json; charset=utf-8', Authorization: basicAuthorization('admin', 'hunter2-secret') },
      body: '{"name":"pmv6-run-password-1","password":"hunter2-secret"}',
    },
    durationMs: 5,
  };
  if (status === undefined) e.error = 'request timed out after 10000 ms (UND_ERR_HEADERS_TIMEOUT)';
  else {
    e.response = { status, headers, body };
    try {
      e.json = JSON.parse(body);
    } catch {
      // not JSON
    }
  }
  return e;
}

function caught(fn: () => unknown): ViolationError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ViolationError) return e;
    throw e;
  }
  throw new Error('no ViolationError thrown');
}

function noResponse(fn: () => unknown): NoResponseError {
  try {
    fn();
  } catch (e) {
    if (e instanceof NoResponseError) return e;
    throw e;
  }
  throw new Error('no NoResponseError thrown');
}

beforeEach(() => {
  clearSecrets();
  registerCredentials('admin', 'hunter2-secret', 'password');
});

describe('message format', () => {
  test('expected, actual, redacted transcript and curl line', () => {
    const e = caught(() => expectStatus(ex(200, '{"id":"12"}'), 201));
    expect(e.expected).toBe('status 201');
    expect(e.actual).toBe('status 200');
    expect(e.message).toBe(
      [
        'expected: status 201',
        'actual:   status 200',
        '',
        `> POST ${URL}`,
        '> Content-Type: application/json; charset=utf-8',
        '> Authorization: Basic «redacted»',
        '>',
        '> {"name":"pmv6-run-password-1","password":"«redacted»"}',
        '',
        '< HTTP 200',
        '< content-type: application/json',
        '<',
        '< {"id":"12"}',
        '',
        `reproduce: curl -sS -i -X 'POST' '${URL}' -H 'Content-Type: application/json; charset=utf-8' -u "$PMV6_USER:$PMV6_PASSWORD" --data-raw '{"name":"pmv6-run-password-1","password":"«redacted»"}'`,
      ].join('\n'),
    );
    expect(e.message).not.toContain('hunter2');
    expect(JSON.stringify(e.exchange)).not.toContain('hunter2');
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe('ViolationError');
  });

  test('bodies are cut at about 2 KB', () => {
    const text = formatExchange(ex(200, JSON.stringify({ items: 'x'.repeat(10_000) })));
    expect(text.length).toBeLessThan(3000);
    expect(text).toContain('…[cut: 7964 bytes]');
  });

  test('no response is never a violation: NoResponseError names the transport error', () => {
    const e = noResponse(() => expectStatus(ex(undefined), 200));
    expect(e).not.toBeInstanceOf(ViolationError);
    expect(e.message).toMatch(/^the target gave no response: request timed out after 10000 ms \(UND_ERR_HEADERS_TIMEOUT\); not judged under any clause/);
    expect(e.message).toContain('< (no response: request timed out after 10000 ms');
    expect(failureRecord(e).kind).toBe('harness');
  });

  test('a request the harness cancelled says so', () => {
    const closed = { ...ex(undefined), error: 'UND_ERR_CLOSED: The client is closed', cancelled: true as const };
    const e = noResponse(() => expectStatus(closed, 200));
    expect(e.message).toMatch(/^harness: the request was cancelled by pmv6 \(UND_ERR_CLOSED/);
  });

  test('every helper, and violation() itself, turns a missing response into NoResponseError', () => {
    const dead = ex(undefined);
    for (const check of [
      () => expectSchema(dead, 'count'),
      () => expectErrorObject(dead, { status: 401 }),
      () => expectErrorObject(dead),
      () => expectHeader(dead, 'Link'),
      () => expectNoBody(dead),
      () => expectJsonContentType(dead),
      () => violation(dead, 'the items of page 1', 'none'),
    ]) {
      expect(noResponse(check)).toBeInstanceOf(NoResponseError);
    }
  });
});

describe('expectStatus', () => {
  test('one of several', () => {
    expect(() => expectStatus(ex(204), [200, 204])).not.toThrow();
    expect(caught(() => expectStatus(ex(500), [200, 204])).expected).toBe('status 200 or 204');
  });
});

describe('expectSchema', () => {
  test('returns the body when valid', () => {
    expect(expectSchema(ex(201, '{"id":12}'), 'created')).toEqual({ id: 12 });
  });
  test('lists the problems', () => {
    expect(caught(() => expectSchema(ex(201, '{"id":"12"}'), 'created')).actual).toBe('/id must be integer');
  });
  test('empty and non-JSON bodies', () => {
    expect(caught(() => expectSchema(ex(201, ''), 'created')).actual).toBe('an empty body');
    expect(caught(() => expectSchema(ex(201, '<html>'), 'created')).actual).toBe('a body that is not JSON: "<html>"');
  });
});

describe('expectErrorObject', () => {
  const body = JSON.stringify({ error: true, type: 'Not Found', message: 'The page number is too high' });
  test('status, type and message', () => {
    expect(expectErrorObject(ex(404, body), { status: 404, type: 'Not Found', message: /too high/ })).toMatchObject({ error: true });
    expect(() => expectErrorObject(ex(404, body), { message: (m) => m.startsWith('The page') })).not.toThrow();
  });
  test('each mismatch is named', () => {
    expect(caught(() => expectErrorObject(ex(404, body), { status: 401 })).expected).toBe('status 401');
    const type = caught(() => expectErrorObject(ex(404, body), { type: 'Unauthorized' }));
    expect([type.expected, type.actual]).toEqual(['error type "Unauthorized"', 'type "Not Found"']);
    const message = caught(() => expectErrorObject(ex(404, body), { message: /disabled/ }));
    expect([message.expected, message.actual]).toEqual(['error message matching /disabled/', 'message "The page number is too high"']);
    expect(caught(() => expectErrorObject(ex(404, '{"error":"yes"}'))).actual).toContain('/error must be true');
  });
});

describe('expectHeader', () => {
  const e = ex(200, '[]', { link: ['<a>; rel="self"', '<b>; rel="next"'], 'content-type': 'application/json' });
  test('presence, exact, regexp, predicate; case-insensitive name; lines joined', () => {
    expect(expectHeader(e, 'Link')).toBe('<a>; rel="self", <b>; rel="next"');
    expect(() => expectHeader(e, 'Content-Type', 'application/json')).not.toThrow();
    expect(() => expectHeader(e, 'link', /rel="next"/)).not.toThrow();
    expect(() => expectHeader(e, 'X-Absent', (v) => v === undefined, 'no X-Absent header')).not.toThrow();
  });
  test('failures', () => {
    expect(caught(() => expectHeader(e, 'X-Page-Size')).actual).toBe('no X-Page-Size header');
    const m = caught(() => expectHeader(e, 'content-type', /xml/));
    expect([m.expected, m.actual]).toEqual(['header content-type: matching /xml/', 'content-type: application/json']);
    expect(caught(() => expectHeader(e, 'Link', (v) => !v?.includes('next'), 'no rel="next" on the last page')).expected).toBe(
      'no rel="next" on the last page',
    );
  });
});

describe('expectNoBody and expectJsonContentType', () => {
  test('no body', () => {
    expect(() => expectNoBody(ex(204, ''))).not.toThrow();
    expect(caught(() => expectNoBody(ex(204, '{}'))).actual).toBe('a body of 2 bytes: "{}"');
  });
  test.each([
    ['application/json', true],
    ['application/json; charset=utf-8', true],
    ['Application/JSON;charset="UTF-8"', true],
    ['application/json; charset=iso-8859-1', false],
    ['text/html', false],
    ['application/jsonp', false],
  ])('%s', (contentType, ok) => {
    const check = () => expectJsonContentType(ex(200, '{}', { 'content-type': contentType }));
    if (ok) expect(check).not.toThrow();
    else expect(caught(check).actual).toBe(`Content-Type: ${contentType}`);
  });
  test('missing Content-Type', () => {
    expect(caught(() => expectJsonContentType(ex(200, '{}', {}))).actual).toBe('no Content-Type header');
  });
});

describe('violation and SetupError', () => {
  test('violation carries clauses; works without an exchange', () => {
    const e = caught(() => violation(undefined, 'rel="self"', 'no Link header', ['PAG-01']));
    expect(e.message).toBe('expected: rel="self"\nactual:   no Link header');
    expect(e.clauses).toEqual(['PAG-01']);
  });
  test('SetupError is not a ViolationError and is redacted', () => {
    const e = new SetupError('creating a project: expected status 201, got 500', { exchange: ex(500, '{}') });
    expect(e).not.toBeInstanceOf(ViolationError);
    expect(e.name).toBe('SetupError');
    expect(e.message).toContain('< HTTP 500');
    expect(e.message + JSON.stringify(e.exchange)).not.toContain('hunter2');
  });
});

describe('kept exchanges are bounded, whatever the reply', () => {
  test('a 1 MB body and a 14 KB Link header are cut where kept, with the bytes left out', () => {
    const link = `<${URL}>${'; x=""'.repeat(1_500)}; rel="self"`;
    const big = ex(200, JSON.stringify({ pad: 'p'.repeat(1024 * 1024) }), { 'content-type': 'application/json', link });
    const e = caught(() => expectStatus(big, 201));
    const kept = e.exchange!;
    expect(kept.response!.body.length).toBeLessThan(5_000);
    expect(kept.response!.body).toMatch(/…\[cut: \d+ bytes\]$/);
    expect(kept.response!.headers['link']).toMatch(/…\[cut: \d+ bytes\]$/);
    expect(kept.json).toBeUndefined();
    expect(e.message.length).toBeLessThan(16_000);
    expect(JSON.stringify(failureRecord(e)).length).toBeLessThan(32_000);
  });

  test('a secret is redacted before the cut, never shown in part', () => {
    const body = `${'a'.repeat(4090)}hunter2-secret${'b'.repeat(100)}`;
    const kept = keep(ex(200, body));
    expect(kept.response!.body).not.toContain('hunter2');
    expect(kept.response!.body).not.toContain('hunte');
  });

  test('JSON nested 100,000 deep: judged as a body pmv6 does not read, no stack overflow', () => {
    const deep: Exchange = { ...ex(200, `${'['.repeat(100_000)}${']'.repeat(100_000)}`), jsonTooDeep: true };
    delete deep.json;
    const e = caught(() => expectSchema(deep, 'count'));
    expect(e.actual).toMatch(/^JSON nested more than 256 levels deep/);
    expect(e.exchange!.response!.body.length).toBeLessThan(5_000);
  });
});
