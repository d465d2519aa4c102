/**
 * Who may query the log (§1: "Log | query the log"; the product's `GET log.json` and
 * `GET log/search/STR.json`, product facts §6): "The Log endpoints require the Admin or IT role"
 * (product facts §4), so the Admin and the IT user are answered and every other role is refused
 * (LOG-08, issue 35), over HTTP Basic and HMAC. A path the target does not serve (404 or 405 to the
 * Admin or IT) says nothing. The entries themselves are judged by model.ts judgeLog.
 */
import fc from 'fast-check';
import { expectResponse } from '../harness/assert.ts';
import { isSuccess } from '../harness/checks.ts';
import { ACTORS, type Actor, fail, framed, type Model, type Real, type Via } from './model.ts';

export class LogAccess implements fc.AsyncCommand<Model, Real, false> {
  constructor(
    readonly actor: Actor,
    readonly via: Via,
  ) {}
  check = () => true;
  async run(_m: Model, r: Real): Promise<void> {
    const allowed = this.actor === 'admin' || this.actor === 'it';
    const who = `the ${this.actor} over ${this.via}`;
    for (const path of ['/log.json', `/log/search/${r.prefix}.json`]) {
      const ex = await r.clients[this.actor][this.via].get(path, { headers: { 'X-Page-Size': '5' } });
      expectResponse(ex, `an answer to GET ${path}`);
      framed(ex);
      const status = ex.response.status;
      if (allowed && (status === 404 || status === 405)) return;
      if (allowed && !isSuccess(ex)) fail('LOG-08', ex, `an answer to GET ${path} for ${who}: the log is for Admin and IT users`, `status ${status}`);
      if (!allowed && isSuccess(ex))
        fail('LOG-08', ex, `a refusal of GET ${path} to ${who}: the Log endpoints require the Admin or IT role`, `status ${status}`);
    }
  }
  toString = () => `queryLog(${this.actor}, ${this.via})`;
}

export function logAccessCommand(): fc.Arbitrary<LogAccess> {
  return fc.tuple(fc.constantFrom<Actor>(...ACTORS), fc.constantFrom<Via>('basic', 'hmac')).map(([a, v]) => new LogAccess(a, v));
}
