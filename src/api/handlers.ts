import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Store } from '../store/store.js';
import { ExpiredError } from '../util/errors.js';
import { decodeBody, parseAccept, readBody, sendError, sendJson, sendRaw } from './http.js';
import { applyPatch } from './patch/index.js';
import { keyPrefix, type ResourceStorage } from './registry.js';
import type { KubeObject } from './resources/types.js';
import { fieldSelectorRequirements, matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from './selectors.js';
import { badRequest, expired, HttpError, methodNotAllowed, successStatus } from './status.js';
import { toTable, type IncludeObject } from './table.js';
import { decodeStored, type CachedObject, type CacheEvent } from './watchcache.js';
import { findUnknownFields, strictDecodingBadRequestMessage } from './openapi/strict.js';
import { decodeTyped, type DecodeMode } from './decode/index.js';
import { watchTimeoutMs } from './limits.js';

/** A request for a resource, parsed from its URL. */
export interface ResourceRequest {
  readonly storage: ResourceStorage;
  /** Namespace from the URL (undefined for cluster-scoped or all-namespace requests). */
  readonly namespace?: string;
  readonly name?: string;
  readonly subresource?: string;
  readonly query: URLSearchParams;
  /** Watch asked through the legacy `/watch/` path prefix. */
  readonly legacyWatch: boolean;
}

interface Selection {
  matches(obj: KubeObject): boolean;
  readonly everything: boolean;
}

function selection(r: ResourceRequest): Selection {
  const def = r.storage.def;
  const lsRaw = r.query.get('labelSelector') ?? '';
  const fsRaw = r.query.get('fieldSelector') ?? '';
  const ls = lsRaw ? parseLabelSelector(lsRaw) : undefined;
  const fs = fsRaw ? parseFieldSelector(fsRaw) : undefined;
  if (fs) {
    for (const { field: f } of fieldSelectorRequirements(fs)) {
      if (f !== 'metadata.name' && f !== 'metadata.namespace' && !(f in def.fieldSelectors)) {
        throw badRequest(`field label not supported: ${f}`);
      }
    }
  }
  const fieldValue = (obj: KubeObject, f: string): string | undefined => {
    if (f === 'metadata.name') return obj.metadata.name ?? '';
    if (f === 'metadata.namespace') return obj.metadata.namespace ?? '';
    const get = def.fieldSelectors[f];
    return get ? get(obj) : undefined;
  };
  return {
    everything: !ls && !fs,
    matches: (obj) => (!ls || matchesLabels(ls, obj.metadata.labels)) && (!fs || matchesFields(fs, (f) => fieldValue(obj, f))),
  };
}

function wantsTable(req: IncomingMessage): boolean {
  return parseAccept(req.headers.accept).some((m) => m.params.as === 'Table' && (m.params.g === 'meta.k8s.io' || m.params.g === undefined));
}

function includeObject(q: URLSearchParams): IncludeObject {
  const v = q.get('includeObject');
  return v === 'None' || v === 'Object' ? v : 'Metadata';
}

function apiVersionOf(r: ResourceRequest): string {
  const d = r.storage.def;
  return d.group ? `${d.group}/${d.version}` : d.version;
}

interface ContinueToken {
  rv: number;
  start: string;
}

function encodeContinue(t: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: t.rv, start: t.start })).toString('base64url');
}

function decodeContinue(s: string): ContinueToken {
  try {
    const o = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as { rv?: unknown; start?: unknown };
    if (typeof o.rv === 'number' && typeof o.start === 'string') return { rv: o.rv, start: o.start };
  } catch {
    // fall through
  }
  throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
}

function parseLimit(q: URLSearchParams): number {
  const s = q.get('limit');
  if (!s) return 0;
  const n = Number(s);
  if (!Number.isInteger(n) || n < 0) throw badRequest(`invalid limit: ${s}`);
  return n;
}

function parseRv(s: string | null): number | undefined {
  if (s === null || s === '') return undefined;
  const n = Number(s);
  if (!Number.isInteger(n) || n < 0) throw badRequest(`Invalid value: "${s}": resourceVersion must be a non-negative integer`);
  return n;
}

/** GET a collection: from the watch cache, or from the store for exact/continued reads. */
export async function handleList(r: ResourceRequest, req: IncomingMessage, res: ServerResponse, store: Store): Promise<void> {
  const sel = selection(r);
  const limit = parseLimit(r.query);
  const cont = r.query.get('continue');
  const rvMatch = r.query.get('resourceVersionMatch') ?? '';
  const rv = parseRv(r.query.get('resourceVersion'));
  const prefix = keyPrefix(r.storage.def, r.namespace);
  if (rvMatch && rvMatch !== 'NotOlderThan' && rvMatch !== 'Exact') throw badRequest(`resourceVersionMatch: Unsupported value: "${rvMatch}": supported values: "Exact", "NotOlderThan"`);
  if (rvMatch && rv === undefined) throw badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided');
  if (cont && rv !== undefined && rv !== 0) throw badRequest('specifying resource version is not allowed when using continue');

  let items: CachedObject[] = [];
  let listRev: number;
  let startAfter = '';
  let readFromStore = false;
  if (cont) {
    const t = decodeContinue(cont);
    listRev = t.rv;
    startAfter = t.start;
    readFromStore = r.storage.cache.revision() !== t.rv;
  } else {
    listRev = r.storage.cache.revision();
    if (rvMatch === 'Exact' && rv !== undefined && rv !== listRev) {
      listRev = rv;
      readFromStore = true;
    } else if (rv !== undefined && rv > listRev) {
      throw new HttpError(504, 'Timeout', `Too large resource version: ${rv}, current: ${listRev}`);
    }
  }

  let next: string | undefined;
  let remaining: number | undefined;
  if (!readFromStore) {
    const all = r.storage.cache.list(prefix);
    let i = 0;
    if (startAfter) {
      let lo = 0;
      let hi = all.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (all[mid]!.key <= startAfter) lo = mid + 1;
        else hi = mid;
      }
      i = lo;
    }
    for (; i < all.length; i++) {
      const c = all[i]!;
      if (!sel.everything && !sel.matches(c.obj)) continue;
      items.push(c);
      if (limit && items.length === limit) {
        if (i + 1 < all.length) {
          next = c.key;
          if (sel.everything) remaining = all.length - i - 1;
        }
        break;
      }
    }
  } else {
    try {
      for (;;) {
        const page = await store.list(prefix, { revision: listRev, startAfter: startAfter || undefined, limit: limit ? Math.max(limit, 500) : 0 });
        for (const kv of page.items) {
          const c = decodeStored(kv);
          startAfter = kv.key;
          if (!sel.everything && !sel.matches(c.obj)) continue;
          items.push(c);
          if (limit && items.length === limit) break;
        }
        const full = limit !== 0 && items.length === limit;
        if (full) {
          const last = items[items.length - 1]!.key;
          const more = page.items.length && page.items[page.items.length - 1]!.key !== last ? true : page.continueKey !== undefined;
          if (more) next = last;
          break;
        }
        if (!page.continueKey) break;
      }
    } catch (e) {
      if (e instanceof ExpiredError) {
        throw expired('The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.');
      }
      throw e;
    }
  }
  const rvStr = String(listRev);
  const continueToken = next ? encodeContinue({ rv: listRev, start: next }) : undefined;
  if (wantsTable(req)) {
    const table = toTable(r.storage.def, items.map((c) => c.obj), { resourceVersion: rvStr, continue: continueToken, remainingItemCount: remaining, include: includeObject(r.query) });
    sendJson(res, 200, table);
    return;
  }
  // Assemble the list from the cached JSON of each object: no re-serialization of the items.
  const meta: Record<string, unknown> = { resourceVersion: rvStr };
  if (continueToken) meta.continue = continueToken;
  if (remaining !== undefined) meta.remainingItemCount = remaining;
  const head = `{"kind":${JSON.stringify(r.storage.def.listKind)},"apiVersion":${JSON.stringify(apiVersionOf(r))},"metadata":${JSON.stringify(meta)},"items":[`;
  sendRaw(res, 200, head + items.map((c) => c.json).join(',') + ']}');
}

/** GET one object. */
export function handleGet(r: ResourceRequest, req: IncomingMessage, res: ServerResponse): void {
  const c = r.storage.mustGet(r.namespace, r.name!);
  if (r.subresource && r.subresource !== 'status') throw notFoundSub(r);
  if (wantsTable(req)) {
    sendJson(res, 200, toTable(r.storage.def, [c.obj], { resourceVersion: c.obj.metadata.resourceVersion, include: includeObject(r.query) }));
    return;
  }
  sendRaw(res, 200, c.json);
}

function notFoundSub(r: ResourceRequest): HttpError {
  return new HttpError(404, 'NotFound', `the server could not find the requested resource`);
}

type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

function fieldValidation(q: URLSearchParams): FieldValidation {
  const v = q.get('fieldValidation') ?? 'Warn';
  if (v !== 'Strict' && v !== 'Warn' && v !== 'Ignore') {
    throw badRequest(`fieldValidation: Unsupported value: "${v}": supported values: "Ignore", "Strict", "Warn"`);
  }
  return v;
}

function dryRun(q: URLSearchParams): boolean {
  const v = q.getAll('dryRun');
  for (const x of v) if (x !== 'All') throw badRequest(`dryRun: Unsupported value: "${x}": supported values: "All"`);
  return v.length > 0;
}

/**
 * Unknown fields: Strict → 400, Warn → a Warning header per field, Ignore → silently dropped.
 * Returns the warnings to send. Unknown fields never reach the store.
 */
function checkUnknownFields(r: ResourceRequest, obj: KubeObject, mode: FieldValidation): string[] {
  const d = r.storage.def;
  const unknown = findUnknownFields(obj, d.group, d.version, d.kind).map((p) => p.replace(/^\./, ''));
  if (!unknown.length) return [];
  if (mode === 'Strict') throw badRequest(strictDecodingBadRequestMessage(d.kind, d.version, unknown));
  pruneFields(obj, unknown);
  return mode === 'Warn' ? unknown.map((u) => `unknown field "${u}"`) : [];
}

/** Removes fields given as paths like `spec.foo` or `spec.containers[0].bar`. */
export function pruneFields(obj: unknown, paths: readonly string[]): void {
  for (const p of paths) {
    const segs: (string | number)[] = [];
    for (const m of p.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) segs.push(m[2] !== undefined ? Number(m[2]) : m[1]!);
    let cur: unknown = obj;
    for (let i = 0; i < segs.length - 1 && cur && typeof cur === 'object'; i++) cur = (cur as Record<string | number, unknown>)[segs[i]!];
    if (cur && typeof cur === 'object' && !Array.isArray(cur)) delete (cur as Record<string, unknown>)[String(segs[segs.length - 1])];
  }
}

function warningHeaders(w: readonly string[]): Record<string, string[]> | undefined {
  if (!w.length) return undefined;
  return { Warning: w.map((x) => `299 - ${JSON.stringify(x)}`) };
}

function asObject(body: unknown, r: ResourceRequest, mode: DecodeMode = 'body'): KubeObject {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('the body of the request was in an unknown format - accepted media types include: application/json, application/yaml');
  const o = body as Record<string, unknown>;
  const d = r.storage.def;
  if (o.kind !== undefined && o.kind !== d.kind && !(r.subresource === undefined && o.kind === '')) {
    throw badRequest(`${d.kind} in version "${d.version}" cannot be handled as a ${d.kind}: the kind in the data (${String(o.kind)}) does not match the expected kind (${d.kind})`);
  }
  if (o.apiVersion !== undefined && o.apiVersion !== apiVersionOf(r)) {
    throw badRequest(`the API version in the data (${String(o.apiVersion)}) does not match the expected API version (${apiVersionOf(r)})`);
  }
  decodeTyped(d, o, mode);
  if (o.metadata === undefined || o.metadata === null) o.metadata = {};
  if (typeof o.metadata !== 'object' || Array.isArray(o.metadata)) throw badRequest('metadata must be an object');
  return o as KubeObject;
}

export async function handleCreate(r: ResourceRequest, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const obj = asObject(decodeBody(await readBody(req), req.headers['content-type']), r);
  const warnings = checkUnknownFields(r, obj, fieldValidation(r.query));
  const out = await r.storage.create(obj, r.namespace, { dryRun: dryRun(r.query) });
  sendJson(res, 201, out, { headers: warningHeaders(warnings) });
}

export async function handleUpdate(r: ResourceRequest, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const sub = subresourceOf(r);
  const body = await readBody(req);
  const decode = (): KubeObject => asObject(decodeBody(body, req.headers['content-type']), r);
  const obj = decode();
  const warnings = checkUnknownFields(r, obj, fieldValidation(r.query));
  // The registry takes ownership of what `next` returns; a retry after a race gets a fresh copy.
  let first = true;
  const next = (): KubeObject => {
    if (first) return (first = false), obj;
    const again = decode();
    checkUnknownFields(r, again, 'Ignore');
    return again;
  };
  const out = await r.storage.update(r.namespace, r.name!, next, { dryRun: dryRun(r.query), subresource: sub });
  sendJson(res, 200, out, { headers: warningHeaders(warnings) });
}

function subresourceOf(r: ResourceRequest): 'status' | 'finalize' | undefined {
  if (!r.subresource) return undefined;
  if (r.subresource === 'status' && r.storage.def.hasStatus) return 'status';
  if (r.subresource === 'finalize' && r.storage.def.kind === 'Namespace') return 'finalize';
  throw notFoundSub(r);
}

export async function handlePatch(r: ResourceRequest, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const sub = subresourceOf(r);
  const ct = req.headers['content-type'] ?? '';
  const raw = await readBody(req);
  let patch: unknown;
  try {
    patch = JSON.parse(raw.toString('utf8'));
  } catch (e) {
    throw badRequest(`error decoding patch: ${(e as Error).message}`);
  }
  const mode = fieldValidation(r.query);
  let warnings: string[] = [];
  const out = await r.storage.update(
    r.namespace,
    r.name!,
    (cur) => {
      const patched = applyPatch(ct, cur, patch, r.storage.def.patchMeta.bind(r.storage.def));
      const obj = asObject(patched, r, 'patch');
      // A patch that does not name a resourceVersion must not turn the current one into a precondition.
      const patchRv = (patch as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion;
      if (patchRv === undefined) delete obj.metadata.resourceVersion;
      warnings = checkUnknownFields(r, obj, mode);
      return obj;
    },
    { dryRun: dryRun(r.query), subresource: sub },
  );
  sendJson(res, 200, out, { headers: warningHeaders(warnings) });
}

interface DeleteBody {
  propagationPolicy?: string;
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: string[];
}

async function deleteOptions(r: ResourceRequest, req: IncomingMessage): Promise<DeleteBody> {
  const raw = await readBody(req);
  let body: DeleteBody = {};
  if (raw.length && raw.toString('utf8').trim()) {
    const parsed = decodeBody(raw, req.headers['content-type']);
    decodeTyped({ group: '', version: 'v1', kind: 'DeleteOptions' }, parsed, 'body');
    if (parsed && typeof parsed === 'object') body = parsed as DeleteBody;
  }
  const g = r.query.get('gracePeriodSeconds');
  if (g !== null) {
    const n = Number(g);
    if (!Number.isInteger(n)) throw badRequest(`invalid gracePeriodSeconds: ${g}`);
    body.gracePeriodSeconds = n;
  }
  const pp = r.query.get('propagationPolicy');
  if (pp) body.propagationPolicy = pp;
  if (body.propagationPolicy && !['Orphan', 'Background', 'Foreground'].includes(body.propagationPolicy)) {
    throw badRequest(`propagationPolicy: Unsupported value: "${body.propagationPolicy}": supported values: "Foreground", "Background", "Orphan"`);
  }
  return body;
}

export async function handleDelete(r: ResourceRequest, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (r.subresource) throw methodNotAllowed();
  const body = await deleteOptions(r, req);
  const result = await r.storage.delete(r.namespace, r.name!, {
    dryRun: dryRun(r.query) || (body.dryRun ?? []).includes('All'),
    gracePeriodSeconds: body.gracePeriodSeconds,
    preconditions: body.preconditions,
    propagationPolicy: body.propagationPolicy,
  });
  const d = r.storage.def;
  if (result.kind === 'pending' || d.kind === 'Pod' || d.kind === 'Namespace') {
    sendJson(res, 200, result.obj);
    return;
  }
  sendJson(res, 200, successStatus({ name: r.name, group: d.group || undefined, kind: d.plural, uid: result.obj.metadata.uid }));
}

export async function handleDeleteCollection(r: ResourceRequest, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const sel = selection(r);
  const body = await deleteOptions(r, req);
  const dry = dryRun(r.query);
  const victims = r.storage.cache.list(keyPrefix(r.storage.def, r.namespace)).filter((c) => sel.matches(c.obj));
  const deleted: KubeObject[] = [];
  for (const c of victims) {
    try {
      const out = await r.storage.delete(c.obj.metadata.namespace, c.obj.metadata.name!, { dryRun: dry, gracePeriodSeconds: body.gracePeriodSeconds });
      deleted.push(out.obj);
    } catch (e) {
      if (e instanceof HttpError && e.httpStatus === 404) continue;
      throw e;
    }
  }
  const d = r.storage.def;
  sendJson(res, 200, { kind: d.listKind, apiVersion: apiVersionOf(r), metadata: { resourceVersion: String(r.storage.cache.revision()) }, items: deleted });
}

const BOOKMARK_INTERVAL_MS = 30_000;
const MAX_WATCH_BUFFER_BYTES = 64 * 1024 * 1024;

/**
 * A watch stream: `{"type":…,"object":…}\n` chunks. Headers are flushed at once (client libraries
 * wait for them). Without a resourceVersion (or "0") the current state is sent first as ADDED.
 * An object that stops matching the selectors is sent as DELETED, one that starts as ADDED, as
 * kube-apiserver's cacher does.
 */
export function handleWatch(r: ResourceRequest, req: IncomingMessage, res: ServerResponse): void {
  const sel = selection(r);
  const rv = parseRv(r.query.get('resourceVersion'));
  const table = wantsTable(req);
  const include = includeObject(r.query);
  const bookmarks = r.query.get('allowWatchBookmarks') === 'true';
  const prefix = keyPrefix(r.storage.def, r.namespace);
  const def = r.storage.def;
  const apiVersion = apiVersionOf(r);
  const timeoutMs = watchTimeoutMs(r.query) ?? (1800 + Math.random() * 1800) * 1000;

  let closed = false;
  let watch: { close(): void } | undefined;
  const timers: NodeJS.Timeout[] = [];
  const close = (): void => {
    if (closed) return;
    flush();
    closed = true;
    watch?.close();
    for (const t of timers) clearTimeout(t), clearInterval(t);
    res.end();
  };
  const write = (type: string, c: CachedObject): void => {
    if (closed) return;
    let line: string;
    if (table) {
      line = JSON.stringify({ type, object: toTable(def, [c.obj], { resourceVersion: c.obj.metadata.resourceVersion, include, noHeaders: false }) }) + '\n';
    } else {
      line = `{"type":"${type}","object":${c.json}}\n`;
    }
    // Events of one turn of the event loop go out in one write: under load a bind is several
    // writes in a row, and one syscall (and TLS record) per event per watcher would dominate.
    pending.push(line);
    if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flush);
    }
  };
  const pending: string[] = [];
  let flushScheduled = false;
  const flush = (): void => {
    flushScheduled = false;
    if (closed || pending.length === 0) return;
    res.write(pending.join(''));
    pending.length = 0;
    if (res.writableLength > MAX_WATCH_BUFFER_BYTES) close(); // a consumer this slow must relist
  };
  const onEvent = (ev: CacheEvent): void => {
    if (!ev.key.startsWith(prefix)) return;
    if (sel.everything) {
      write(ev.type, ev.cur);
      return;
    }
    const nowMatch = ev.type !== 'DELETED' && sel.matches(ev.cur.obj);
    const wasMatch = ev.prev !== undefined && sel.matches(ev.prev.obj);
    if (ev.type === 'DELETED') {
      if (wasMatch || sel.matches(ev.cur.obj)) write('DELETED', ev.cur);
    } else if (nowMatch && wasMatch) write('MODIFIED', ev.cur);
    else if (nowMatch) write('ADDED', ev.cur);
    else if (wasMatch) write('DELETED', ev.cur);
  };

  let fromRev: number;
  const initial: CachedObject[] = [];
  if (rv === undefined || rv === 0) {
    fromRev = r.storage.cache.revision();
    for (const c of r.storage.cache.list(prefix)) if (sel.everything || sel.matches(c.obj)) initial.push(c);
  } else {
    fromRev = rv;
  }
  // History replays synchronously inside cache.watch(); hold it until the headers are out.
  let held: CacheEvent[] | undefined = [];
  try {
    watch = r.storage.cache.watch(fromRev, (ev) => {
      if (ev.rev <= fromRev) return;
      if (held) held.push(ev);
      else onEvent(ev);
    });
  } catch (e) {
    if (e instanceof ExpiredError) {
      // kube answers an expired watch with 200 and a single ERROR event carrying a 410 Status.
      res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
      res.end(JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: e.message, reason: 'Expired', code: 410 } }) + '\n');
      return;
    }
    throw e;
  }
  res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache, private' });
  res.flushHeaders();
  for (const c of initial) write('ADDED', c);
  const replay = held;
  held = undefined;
  for (const ev of replay) onEvent(ev);
  req.on('close', close);
  res.on('error', close);
  if (Number.isFinite(timeoutMs) && timeoutMs > 0) timers.push(setTimeout(close, timeoutMs));
  if (bookmarks) {
    timers.push(
      setInterval(() => {
        const rvNow = String(r.storage.cache.revision());
        flush();
        res.write(`{"type":"BOOKMARK","object":{"kind":${JSON.stringify(def.kind)},"apiVersion":${JSON.stringify(apiVersion)},"metadata":{"resourceVersion":"${rvNow}"}}}\n`);
      }, BOOKMARK_INTERVAL_MS),
    );
  }
}

/** A watch, asked by `?watch=true|1` or the legacy `/watch/` path. */
export function isWatch(r: ResourceRequest): boolean {
  return r.legacyWatch || r.query.get('watch') === 'true' || r.query.get('watch') === '1';
}

/** Routes a resource request by method. */
export async function handleResource(r: ResourceRequest, req: IncomingMessage, res: ServerResponse, store: Store): Promise<void> {
  const method = req.method ?? 'GET';
  const watch = isWatch(r);
  if (r.name === undefined) {
    if (method === 'GET') return watch ? handleWatch(r, req, res) : handleList(r, req, res, store);
    if (method === 'POST') {
      if (r.storage.def.namespaced && !r.namespace) throw methodNotAllowed();
      return handleCreate(r, req, res);
    }
    if (method === 'DELETE') return handleDeleteCollection(r, req, res);
    throw methodNotAllowed();
  }
  if (method === 'GET') {
    if (watch) {
      // A watch on a single object is a watch of the collection restricted to that name.
      const q = new URLSearchParams(r.query);
      const fs = q.get('fieldSelector');
      q.set('fieldSelector', fs ? `${fs},metadata.name=${r.name}` : `metadata.name=${r.name}`);
      return handleWatch({ ...r, name: undefined, query: q }, req, res);
    }
    return handleGet(r, req, res);
  }
  if (method === 'PUT') return handleUpdate(r, req, res);
  if (method === 'PATCH') return handlePatch(r, req, res);
  if (method === 'DELETE') return handleDelete(r, req, res);
  if (method === 'POST' && r.subresource === 'binding' && r.storage.def.kind === 'Pod') return handleBinding(r, req, res);
  throw methodNotAllowed();
}

/** POST pods/<name>/binding: sets spec.nodeName once, as the scheduler does. */
async function handleBinding(r: ResourceRequest, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = decodeBody(await readBody(req), req.headers['content-type']) as { target?: { name?: string; kind?: string } } | null;
  decodeTyped({ group: '', version: 'v1', kind: 'Binding' }, body, 'body');
  const node = body?.target?.name;
  if (!node) throw badRequest('target.name: Required value');
  await r.storage.update(r.namespace, r.name!, (current) => {
    const cur = structuredClone(current);
    const spec = (cur.spec ?? {}) as { nodeName?: string };
    if (spec.nodeName) {
      throw new HttpError(409, 'Conflict', `Operation cannot be fulfilled on pods/binding "${r.name}": pod ${r.name} is already assigned to node "${spec.nodeName}"`);
    }
    cur.spec = { ...spec, nodeName: node };
    return cur;
  });
  sendJson(res, 201, successStatus());
}

