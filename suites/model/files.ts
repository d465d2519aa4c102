/**
 * The commands on files (§1: "Files | list, show, update notes of a file, get the maximum upload
 * file size, get uploads folder information, upload, download, delete"; "list files, upload a
 * file" of projects and passwords), at the product's paths (product facts §6), each write read
 * back by the users it concerns (README.md here). The spec shows none of these paths, so a broken
 * effect is judged at SHOULD under OPS-09, citing the product's path; a file shown to a user given
 * no access to its password or project is GEN-09 (MUST), as for passwords.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import type { Exchange } from '../../core/exchange.ts';
import { clip } from '../../core/redact.ts';
import { isSuccess } from '../harness/checks.ts';
import type { ApiClient } from '../harness/client.ts';
import { together } from '../harness/in-order.ts';
import { createdId, fail, framed, listed, type Model, OUTSIDERS, PAGE, type Pw, pick, type Real, Step, stringsIn, UNLOCK, type Via } from './model.ts';

/** A file of the sequence's own, uploaded by the Admin to one of its passwords or to the file's main project. */
export interface Fil {
  id: number;
  name: string;
  /** The bytes uploaded, as base64: a download holds them byte for byte. */
  data: string;
  notes: string;
  on: { kind: 'password'; pw: Pw } | { kind: 'project'; id: number };
  deleted: boolean;
}

const CLAUSE = 'OPS-09';
/** Decision: past this the upload over the maximum is not sent (its body would be the size of the maximum). */
const OVER_MAX_AT_MOST = 16 * 1024 * 1024;
/** The sequences that sent an upload over the maximum: one a sequence (its body is the size of the maximum). */
const overMaxTried = new WeakSet<Model>();

const files = (m: Model): Fil[] => (m.files ??= []);
const labelF = (f: Fil) => `file ${f.id} (${f.name})`;
/** A file whose container is gone or changed state is no longer judged (transitions: not shown). */
const live = (f: Fil) => !f.deleted && (f.on.kind === 'project' || (!f.on.pw.deleted && !f.on.pw.archived));
const containerPath = (f: Pick<Fil, 'on'>) => (f.on.kind === 'password' ? `/passwords/${f.on.pw.id}` : `/projects/${f.on.id}`);
/** The viewer reads files of the main project and of passwords whose state never changed. */
const viewerSees = (f: Fil) => f.on.kind === 'project' || !f.on.pw.changedState;

/** A call on a password's file, or its files, answered 2XX: the server may log it with the password (LOG-01's bookkeeping). */
function called(f: Pick<Fil, 'on'>, ex: Exchange): Exchange {
  if (f.on.kind === 'password' && isSuccess(ex)) f.on.pw.fileCalls = (f.on.pw.fileCalls ?? 0) + 1;
  return ex;
}

function pickF(m: Model, back: number): Fil | undefined {
  const list = files(m).filter(live);
  return list.length === 0 ? undefined : list[list.length - 1 - (back % list.length)];
}

/** A file name: ASCII, or with letters beyond ASCII, outside the BMP too (LIM-01's character set). */
function fileName(r: Real, marker: string, ascii: boolean): string {
  const base = `${r.s.fixtures.name('model-file')}-${marker}`;
  return ascii ? `${base}.bin` : `${base}-résumé-日本語-😀.bin`;
}

/** The files GET <container>/files.json lists, by id; undefined when the product's path is not offered. */
async function fileIds(c: ApiClient, f: Pick<Fil, 'on'>, clause: string, who: string): Promise<{ ex: Exchange; ids: Set<number> } | undefined> {
  const path = `${containerPath(f)}/files.json`;
  const ex = called(f, await c.get(path, { headers: { ...UNLOCK, ...PAGE } }));
  if ((ex.response?.status === 404 || ex.response?.status === 405) && !Array.isArray(ex.json)) return undefined;
  return { ex, ids: listed(ex, clause, `GET ${path} for ${who}`) };
}

/**
 * A file read back by a user who may read its container: listed in its container's files, shown
 * with its name and current notes, downloaded with the bytes uploaded (the base64 of the bytes
 * anywhere in the body: its fields are not shown); once deleted, neither listed, shown nor
 * downloaded.
 */
async function judgeFile(r: Real, actor: 'admin' | 'viewer', via: Via, f: Fil, parts: { list?: boolean; show?: boolean; download?: boolean }): Promise<void> {
  const c = r.clients[actor][via];
  const who = `the ${actor} over ${via}`;
  // The list, the show and the download side by side (reads), judged in this order.
  const [got, shown, downloaded] = await together([
    parts.list ? fileIds(c, f, CLAUSE, who) : undefined,
    parts.show ? c.get(`/files/${f.id}.json`, { headers: UNLOCK }).then((ex) => called(f, ex)) : undefined,
    parts.download ? c.get(`/files/download/${f.id}.json`, { headers: UNLOCK }).then((ex) => called(f, ex)) : undefined,
  ]);
  if (parts.list) {
    if (got && f.deleted && got.ids.has(f.id))
      fail(CLAUSE, got.ex, `no ${labelF(f)} in the files of its container after its DELETE answered 2XX, for ${who}`, 'listed');
    if (got && !f.deleted && !got.ids.has(f.id)) fail(CLAUSE, got.ex, `${labelF(f)}, uploaded with a 2XX, in the files of its container for ${who}`, 'missing');
  }
  if (shown) {
    const ex = shown;
    framed(ex);
    if (f.deleted) {
      if (isSuccess(ex)) fail(CLAUSE, ex, `an error for ${labelF(f)}, deleted with a 2XX, shown to ${who}`, `status ${ex.response?.status}`);
    } else if (ex.response?.status !== 404 && ex.response?.status !== 405) {
      if (ex.response?.status !== 200) fail(CLAUSE, ex, `200 OK and ${labelF(f)} for ${who}`, `status ${ex.response?.status}`);
      const strings = stringsIn(ex.json);
      if (!strings.includes(f.name) || (f.notes !== '' && !strings.includes(f.notes)))
        fail(
          CLAUSE,
          ex,
          `the name ${f.name} as uploaded and the notes ${JSON.stringify(f.notes)} of the last update answered 2XX in the show of ${labelF(f)} for ${who}`,
          clip(JSON.stringify(ex.json), 300) ?? 'no body',
        );
    }
  }
  if (downloaded) {
    const ex = downloaded;
    framed(ex);
    if (f.deleted) {
      if (isSuccess(ex)) fail(CLAUSE, ex, `an error for the download of ${labelF(f)}, deleted with a 2XX, by ${who}`, `status ${ex.response?.status}`);
    } else if (ex.response?.status !== 404 && ex.response?.status !== 405) {
      if (ex.response?.status !== 200) fail(CLAUSE, ex, `200 OK and the bytes of ${labelF(f)} for ${who}`, `status ${ex.response?.status}`);
      if (!stringsIn(ex.json).includes(f.data))
        fail(
          CLAUSE,
          ex,
          `the ${Buffer.from(f.data, 'base64').length} bytes uploaded as ${labelF(f)}, byte for byte (base64), in its download for ${who}`,
          'other bytes, or none',
        );
    }
  }
}

/** Every reading of a file by the Admin and, where the viewer may read its container, by the viewer. */
async function readBack(r: Real, via: Via, f: Fil): Promise<void> {
  // Side by side (reads), judged in this order.
  await together([
    judgeFile(r, 'admin', via, f, { list: true, show: true, download: true }),
    viewerSees(f) && judgeFile(r, 'viewer', via, f, { list: true, download: true }),
  ]);
}

/** POST <container>/upload.json by the Admin ({file_name, file_data_base64, notes}, product facts §6), read back. */
async function upload(m: Model, r: Real, via: Via, on: Fil['on'], ascii: boolean): Promise<void> {
  const marker = `${r.prefix}f${++r.counter.n}z`;
  const name = fileName(r, marker, ascii);
  const data = randomBytes(48 + (r.counter.n % 40)).toString('base64');
  const notes = `notes-${marker}`;
  const f: Fil = { id: 0, name, data, notes, on, deleted: false };
  const ex = called(
    f,
    await r.clients.admin[via].post(`${containerPath(f)}/upload.json`, { file_name: name, file_data_base64: data, notes }, { headers: UNLOCK }),
  );
  framed(ex);
  const id = isSuccess(ex) ? createdId(ex) : undefined;
  if (id === undefined || !(await r.s.fixtures.track('file', id, name, { creation: ex, reader: r.clients.admin[via], lazy: true }))) return;
  f.id = id;
  files(m).push(f);
  await readBack(r, via, f);
}

/**
 * GET files/max_upload_file_size.json and files/uploads_folder_info.json by the Admin: each
 * answered 200 with an object. With `over`, once a sequence and where the maximum is small enough
 * to send, an upload of one byte more: refused, and nothing of it listed (OPS-09).
 */
async function limits(m: Model, r: Real, via: Via, over: boolean): Promise<void> {
  const c = r.clients.admin[via];
  const [mx, info] = await together([c.get('/files/max_upload_file_size.json'), c.get('/files/uploads_folder_info.json')]);
  framed(mx);
  framed(info);
  for (const ex of [mx, info]) {
    const status = ex.response?.status;
    if (status === 404 || status === 405) continue;
    if (status !== 200 || ex.json === null || typeof ex.json !== 'object' || Array.isArray(ex.json))
      fail(CLAUSE, ex, `200 OK and an object for the Admin over ${via}`, `status ${status}: ${clip(JSON.stringify(ex.json), 200)}`);
  }
  // Decision (fields not shown): the maximum is the one whole number of bytes in the answer's `_bytes` field, or not used.
  const bytes = Object.entries((mx.json ?? {}) as Record<string, unknown>).find(([k, v]) => /bytes/i.test(k) && Number.isInteger(v))?.[1] as number | undefined;
  if (!over || bytes === undefined || bytes < 1 || bytes > OVER_MAX_AT_MOST || overMaxTried.has(m)) return;
  overMaxTried.add(m);
  const on: Fil['on'] = { kind: 'project', id: r.projects.main };
  const name = `${r.s.fixtures.name('model-file')}-${r.prefix}f${++r.counter.n}z-over-max.bin`;
  const ex = await c.post(`${containerPath({ on })}/upload.json`, { file_name: name, file_data_base64: base64OfAs(bytes + 1) });
  framed(ex);
  const id = isSuccess(ex) ? createdId(ex) : undefined;
  if (isSuccess(ex)) {
    if (id !== undefined && (await r.s.fixtures.track('file', id, name, { creation: ex, reader: c, lazy: true })))
      files(m).push({ id, name, data: '', notes: '', on, deleted: false });
    fail(CLAUSE, ex, `a refusal of an upload of ${bytes + 1} bytes, one more than the maximum upload file size ${bytes}`, `status ${ex.response?.status}`);
  }
  const got = await fileIds(c, { on }, CLAUSE, `the Admin over ${via}`);
  if (got && id !== undefined && got.ids.has(id)) fail(CLAUSE, got.ex, `nothing of the refused upload ${name} listed`, `file ${id} listed`);
}

/**
 * The base64 of `n` bytes "a", made as text: "aaa" is "YWFh". Decision (issue 38): the upload
 * over a maximum of 10 MiB is a 14 MB text; the bytes it encodes are never made.
 */
export function base64OfAs(n: number): string {
  return 'YWFh'.repeat(Math.floor(n / 3)) + Buffer.alloc(n % 3, 0x61).toString('base64');
}

/** A user given no access to a file's container: no list of its files, no show, no download, no upload (GEN-09). */
async function intrude(r: Real, actor: (typeof OUTSIDERS)[number], via: Via, f: Fil): Promise<void> {
  const c = r.clients[actor][via];
  const who = `the ${actor} over ${via}, who was given no access to it`;
  // The three side by side (reads), judged in this order.
  const [list, show, download] = await together([
    c.get(`${containerPath(f)}/files.json`, { headers: UNLOCK }).then((ex) => called(f, ex)),
    c.get(`/files/${f.id}.json`, { headers: UNLOCK }).then((ex) => called(f, ex)),
    c.get(`/files/download/${f.id}.json`, { headers: UNLOCK }).then((ex) => called(f, ex)),
  ]);
  for (const [what, ex] of [
    [`a list of the files of ${containerPath(f)}`, list],
    [`a show of ${labelF(f)}`, show],
    [`a download of ${labelF(f)}`, download],
  ] as const) {
    framed(ex);
    if (!isSuccess(ex)) continue;
    // A list that answers holds none of the run's files.
    if (what.startsWith('a list') && Array.isArray(ex.json) && !listed(ex, 'GEN-09', what).has(f.id)) continue;
    fail('GEN-09', ex, `a refusal of ${what} to ${who}`, `status ${ex.response?.status}: ${clip(JSON.stringify(ex.json), 200)}`);
  }
}

/**
 * One choice among the commands on files. Decision (the request budget): one command of the
 * list, like groups, projects and users; while the sequence has no file, a command on a file
 * uploads one first (to the sequence's newest password, or the main project when it has none).
 */
export class FileStep extends Step {
  private did = '';
  constructor(
    readonly kind: 'upload' | 'notes' | 'delete' | 'read' | 'limits' | 'over' | 'intrude',
    readonly via: Via,
    readonly back: number,
    readonly onPassword: boolean,
    readonly ascii: boolean,
    readonly intruder: (typeof OUTSIDERS)[number],
  ) {
    super();
  }
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const steps: string[] = [];
    if (this.kind === 'limits' || this.kind === 'over') {
      this.did = this.kind === 'over' ? 'limits+overMax' : 'limits';
      return limits(m, r, this.via, this.kind === 'over');
    }
    if (this.kind === 'upload' || !pickF(m, this.back)) {
      const pw = this.onPassword ? pick(m, this.back) : undefined;
      const on: Fil['on'] = pw && !pw.archived ? { kind: 'password', pw } : { kind: 'project', id: r.projects.main };
      steps.push(`upload(${on.kind}, ${this.ascii ? 'ascii' : 'non-ascii'})`);
      this.did = steps.join('+');
      await upload(m, r, this.via, on, this.ascii);
      if (this.kind === 'upload') return;
    }
    const f = pickF(m, this.back);
    if (!f) return;
    steps.push(this.kind);
    this.did = steps.join('+');
    const c = r.clients.admin[this.via];
    if (this.kind === 'read') return judgeFile(r, 'viewer', this.via, f, viewerSees(f) ? { show: true, download: true } : {});
    if (this.kind === 'intrude') return intrude(r, this.intruder, this.via, f);
    if (this.kind === 'notes') {
      const notes = `notes-${r.prefix}-${++r.counter.n}-ü`;
      const ex = called(f, await c.put(`/files/${f.id}.json`, { notes }, { headers: UNLOCK }));
      framed(ex);
      if (!isSuccess(ex)) return;
      f.notes = notes;
      await judgeFile(r, 'admin', this.via, f, { show: true });
      if (viewerSees(f)) await judgeFile(r, 'viewer', this.via, f, { show: true });
      return;
    }
    const ex = called(f, await c.delete(`/files/${f.id}.json`, { headers: UNLOCK }));
    framed(ex);
    if (!isSuccess(ex)) return;
    f.deleted = true;
    r.s.fixtures.forget('file', f.id);
    await readBack(r, this.via, f);
  }
  toString = () => `file(${this.did || this.kind}, ${this.via}, -${this.back})`;
}

/**
 * At the end of a sequence (also one that failed), its files still there deleted by the Admin, with
 * X-Unlock-Reason (a locked password's files need it, product facts §3): the file's cleanup
 * would send none. Not judged.
 */
export async function endFiles(m: Model, r: Real): Promise<void> {
  for (const f of files(m).filter((x) => !x.deleted)) {
    const ex = called(f, await r.s.admin.delete(`/files/${f.id}.json`, { headers: UNLOCK }));
    if (isSuccess(ex) || ex.response?.status === 404) {
      f.deleted = true;
      r.s.fixtures.forget('file', f.id);
    }
  }
}

const via = fc.constantFrom<Via>('basic', 'hmac');
const back = fc.constantFrom(0, 0, 0, 1, 2);

/** The commands on files: one choice among their kinds (the request budget). */
export function fileCommands(): Array<fc.Arbitrary<Step>> {
  return [
    fc
      .tuple(
        fc.constantFrom<FileStep['kind']>('upload', 'upload', 'notes', 'delete', 'read', 'limits', 'over', 'intrude'),
        via,
        back,
        fc.boolean(),
        fc.boolean(),
        fc.constantFrom(...OUTSIDERS),
      )
      .map(([k, v, b, p, a, i]) => new FileStep(k, v, b, p, a, i)),
  ];
}
