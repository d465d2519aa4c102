/**
 * The kit's control endpoints, {base}/__clients/…, with the control protocol's bearer token:
 *
 * | request | answer |
 * |---|---|
 * | `GET scenario` | 200 `{"scenario": {...}, "scenarios": {name: description}}` |
 * | `PUT scenario` `{"name", "path"?, "times"?, "delayMs"?}` | 200 `{"scenario": {...}}`; 400 error object for a bad value |
 * | `DELETE scenario` | 204, back to normal |
 * | `GET findings` | 200 the snapshot: clients, requests, findings (redacted) |
 * | `POST reset` | 204: findings and counts cleared, scenario normal (data kept) |
 * | `POST stop` | 204: `pmv6 clients serve` writes its report and exits |
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { safeEqual } from '../fixtures/reference-server/src/crypto.ts';
import { errorObject, JSON_CONTENT_TYPE } from '../fixtures/reference-server/src/errors.ts';
import type { ClientKit } from './kit.ts';
import { parseScenario, SCENARIOS } from './scenarios.ts';

const send = (reply: FastifyReply, status: number, body?: unknown): FastifyReply =>
  status === 204 ? reply.code(204).send() : reply.code(status).header('content-type', JSON_CONTENT_TYPE).send(JSON.stringify(body));
const error = (reply: FastifyReply, status: number, message: string) => send(reply, status, errorObject(status, message));

export function installControl(app: FastifyInstance, opts: { basePath: string; token: string; kit: ClientKit; stop: () => void }): void {
  const prefix = `${opts.basePath}/__clients/`;
  app.route({
    method: ['GET', 'PUT', 'POST', 'DELETE'],
    url: `${prefix}*`,
    handler: async (request, reply) => {
      const authz = request.headers.authorization;
      const token = typeof authz === 'string' && /^bearer /i.test(authz) ? authz.slice(7).trim() : undefined;
      if (token === undefined || !safeEqual(token, opts.token)) return error(reply, 401, 'A valid control token is required (Authorization: Bearer …)');
      const what = (request.raw.url ?? request.url).split('?')[0]!.slice(prefix.length);
      const route = `${request.method} ${what}`;
      const { kit } = opts;
      switch (route) {
        case 'GET scenario':
          return send(reply, 200, { scenario: kit.scenario() ?? { name: 'normal' }, scenarios: SCENARIOS });
        case 'PUT scenario': {
          let body: unknown;
          try {
            body = JSON.parse(Buffer.isBuffer(request.body) ? request.body.toString('utf8') : '');
          } catch {
            return error(reply, 400, 'the body must be JSON such as {"name":"one-page"}');
          }
          const s = parseScenario(body);
          if (typeof s === 'string') return error(reply, 400, s);
          kit.setScenario(s);
          return send(reply, 200, { scenario: kit.scenario() ?? { name: 'normal' } });
        }
        case 'DELETE scenario':
          kit.setScenario(undefined);
          return send(reply, 204);
        case 'GET findings':
          return send(reply, 200, kit.snapshot());
        case 'POST reset':
          kit.reset();
          return send(reply, 204);
        case 'POST stop':
          opts.stop();
          return send(reply, 204);
        default:
          return error(reply, 404, `no such kit endpoint: ${route} (scenario, findings, reset, stop)`);
      }
    },
  });
}
