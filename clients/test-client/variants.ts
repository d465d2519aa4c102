/**
 * The faulty variants of the test client: each breaks one client clause in one place. The client
 * kill matrix (../kill-matrix.ts) requires each to be flagged by its own clause (and an HMAC
 * variant's diagnosis to name its mistake), and the conforming client to raise no finding.
 */
import type { HmacMistake } from '../hmac-diagnosis.ts';
import type { ClientFault } from './client.ts';

export interface ClientVariant {
  fault: ClientFault;
  clause: string;
  auth: 'basic' | 'hmac';
  /** For HMAC variants: the mistake the diagnosis must name. */
  mistake?: HmacMistake;
  description: string;
}

export const CLIENT_VARIANTS: readonly ClientVariant[] = [
  { fault: 'no-content-type', clause: 'CLI-01', auth: 'basic', description: 'sends no Content-Type header' },
  { fault: 'no-authentication', clause: 'CLI-02', auth: 'basic', description: 'sends no credentials' },
  { fault: 'url-without-json', clause: 'CLI-03', auth: 'basic', description: 'leaves .json off every URL' },
  { fault: 'wrong-api-version', clause: 'CLI-04', auth: 'basic', description: 'calls /index.php/api/v5/ instead of v6' },
  { fault: 'page-size-2000', clause: 'CLI-05', auth: 'basic', description: 'sends X-Page-Size: 2000' },
  { fault: 'count-without-page-size', clause: 'CLI-06', auth: 'basic', description: 'asks the count without the X-Page-Size of its list' },
  { fault: 'hmac-decoded-path', clause: 'CLI-07', auth: 'hmac', mistake: 'decoded-path', description: 'signs the percent-decoded path' },
  { fault: 'hmac-no-query', clause: 'CLI-07', auth: 'hmac', mistake: 'no-query', description: 'signs the path without its query' },
  { fault: 'hmac-leading-slash', clause: 'CLI-07', auth: 'hmac', mistake: 'leading-slash', description: 'signs the path with a leading slash' },
  { fault: 'hmac-index-php', clause: 'CLI-07', auth: 'hmac', mistake: 'index-php-included', description: 'signs the path with index.php/ in it' },
  {
    fault: 'hmac-reserialised-body',
    clause: 'CLI-07',
    auth: 'hmac',
    mistake: 'reserialised-body',
    description: 'sends indented JSON and signs the compact form',
  },
  { fault: 'hmac-uppercase-hex', clause: 'CLI-07', auth: 'hmac', mistake: 'uppercase-hex', description: 'sends the hash in uppercase hex' },
  { fault: 'hmac-milliseconds', clause: 'CLI-07', auth: 'hmac', mistake: 'milliseconds', description: 'uses a timestamp in milliseconds' },
  { fault: 'hmac-clock-skew', clause: 'CLI-07', auth: 'hmac', mistake: 'clock-skew', description: "uses a timestamp an hour behind the server's clock" },
  { fault: 'patch-method', clause: 'CLI-08', auth: 'basic', description: 'updates with PATCH instead of PUT' },
  { fault: 'body-not-json', clause: 'CLI-09', auth: 'basic', description: 'sends form-encoded bodies under the JSON Content-Type' },
];
