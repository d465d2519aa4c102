import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  /** request target exactly as it came on the wire */
  url: string;
  headers: IncomingMessage['headers'];
  rawHeaders: string[];
  body: Buffer;
}

export interface Stub {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

/** A node:http server on 127.0.0.1:0 that records every request and answers with `handler`. */
export async function startStub(handler: (req: Received, res: ServerResponse) => void): Promise<Stub> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks),
      };
      received.push(r);
      handler(r, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { ...(text ? { 'content-type': 'application/json' } : {}), ...headers });
  res.end(text);
}

/**
 * A handler that answers like `handler` until `answering()` turns false, then never answers
 * (the connection stays open): a target that stops answering mid-run.
 */
export function stopsAnswering(handler: (req: Received, res: ServerResponse) => void, answering: () => boolean): (req: Received, res: ServerResponse) => void {
  return (req, res) => {
    if (answering()) handler(req, res);
  };
}
