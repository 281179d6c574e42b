/** GET with `watch`: a chunked stream of `{"type":…,"object":…}\n` events. */
import type { ServerResponse } from 'node:http';
import { ExpiredError } from '../../util/errors.js';
import { keyPrefix } from '../registry.js';
import type { ResourceDef } from '../resources/types.js';
import { toTable, type IncludeObject } from '../table.js';
import type { CachedObject, CacheEvent, WatchEventType } from '../watchcache.js';
import { watchTimeoutMs } from '../limits.js';
import { apiVersionOf, includeObject, parseRv, selection, type ResourceCall, type Selection } from './request.js';

const BOOKMARK_INTERVAL_MS = 30_000;
const MAX_WATCH_BUFFER_BYTES = 64 * 1024 * 1024;

/**
 * The response side of one watch: encodes events (plain objects or Table rows) and writes them in
 * batches. Once closed it writes nothing more and ends the response; `onClose` hooks release what
 * feeds it.
 */
export class WatchStream {
  private closed = false;
  private readonly pending: string[] = [];
  private flushScheduled = false;
  private readonly closers: Array<() => void> = [];

  constructor(
    private readonly res: ServerResponse,
    private readonly def: ResourceDef,
    private readonly apiVersion: string,
    private readonly table: { include: IncludeObject } | undefined,
  ) {}

  /** Sends the 200 and flushes the headers at once: client libraries wait for them before reading. */
  open(): void {
    this.res.writeHead(200, {
      'Content-Type': 'application/json',
      'Transfer-Encoding': 'chunked',
      'Cache-Control': 'no-cache, private',
    });
    this.res.flushHeaders();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  onClose(f: () => void): void {
    this.closers.push(f);
  }

  send(type: WatchEventType, c: CachedObject): void {
    if (this.closed) return;
    const line = this.table
      ? JSON.stringify({
          type,
          object: toTable(this.def, [c.obj], {
            resourceVersion: c.obj.metadata.resourceVersion,
            include: this.table.include,
            noHeaders: false,
          }),
        }) + '\n'
      : `{"type":"${type}","object":${c.json}}\n`;
    // Events of one turn of the event loop go out in one write: under load a bind is several
    // writes in a row, and one syscall (and TLS record) per event per watcher would dominate.
    this.pending.push(line);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** A BOOKMARK carrying only the current resourceVersion. */
  bookmark(resourceVersion: string): void {
    if (this.closed) return;
    this.flush();
    this.res.write(
      `{"type":"BOOKMARK","object":{"kind":${JSON.stringify(this.def.kind)},"apiVersion":${JSON.stringify(this.apiVersion)},"metadata":{"resourceVersion":"${resourceVersion}"}}}\n`,
    );
  }

  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    for (const f of this.closers) f();
    this.res.end();
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.closed || this.pending.length === 0) return;
    this.res.write(this.pending.join(''));
    this.pending.length = 0;
    if (this.res.writableLength > MAX_WATCH_BUFFER_BYTES) this.close(); // a consumer this slow must relist
  }
}

/**
 * What a watcher with selectors sees of one change: an object that stops matching is DELETED, one
 * that starts matching is ADDED, as kube-apiserver's cacher does. Undefined = nothing to send.
 */
export function visibleEvent(sel: Selection, ev: CacheEvent): WatchEventType | undefined {
  if (sel.everything) return ev.type;
  const wasMatch = ev.prev !== undefined && sel.matches(ev.prev.obj);
  if (ev.type === 'DELETED') return wasMatch || sel.matches(ev.cur.obj) ? 'DELETED' : undefined;
  const nowMatch = sel.matches(ev.cur.obj);
  if (nowMatch && wasMatch) return 'MODIFIED';
  if (nowMatch) return 'ADDED';
  if (wasMatch) return 'DELETED';
  return undefined;
}

/**
 * A watch of a collection. Without a resourceVersion (or "0") the current state is sent first as
 * ADDED; from an older revision the kept history is replayed. A revision no longer kept is
 * answered as kube does: 200 and a single ERROR event carrying a 410 Expired Status.
 */
export async function handleWatch(call: ResourceCall): Promise<void> {
  // A revision this server's cache has not reached yet (a client failing over from another API
  // server): wait for it, bounded, as kube-apiserver's cacher does, before answering "too large".
  const rv = parseRv(call.r.query.get('resourceVersion'));
  const cache = call.r.storage.cache;
  if (rv !== undefined && rv > cache.revision()) await cache.waitForRevision(rv);
  startWatch(call);
}

function startWatch({ r, req, res, format }: ResourceCall): void {
  const sel = selection(r);
  const rv = parseRv(r.query.get('resourceVersion'));
  const timeoutMs = watchTimeoutMs(r.query) ?? (1800 + Math.random() * 1800) * 1000;
  const prefix = keyPrefix(r.storage.def, r.namespace);
  const cache = r.storage.cache;
  const stream = new WatchStream(
    res,
    r.storage.def,
    apiVersionOf(r),
    format === 'table' ? { include: includeObject(r.query) } : undefined,
  );
  const onEvent = (ev: CacheEvent): void => {
    if (!ev.key.startsWith(prefix)) return;
    const type = visibleEvent(sel, ev);
    if (type) stream.send(type, ev.cur);
  };

  let fromRev: number;
  const initial: CachedObject[] = [];
  if (rv === undefined || rv === 0) {
    fromRev = cache.revision();
    for (const c of cache.list(prefix)) if (sel.everything || sel.matches(c.obj)) initial.push(c);
  } else {
    fromRev = rv;
  }
  // History replays synchronously inside cache.watch(); hold it until the headers are out.
  let held: CacheEvent[] | undefined = [];
  try {
    const watch = cache.watch(
      fromRev,
      (ev) => {
        if (ev.rev <= fromRev) return;
        if (held) held.push(ev);
        else onEvent(ev);
      },
      () => stream.close(),
    );
    stream.onClose(() => watch.close());
  } catch (e) {
    if (e instanceof ExpiredError) {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
      res.end(
        JSON.stringify({
          type: 'ERROR',
          object: {
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Failure',
            message: e.message,
            reason: 'Expired',
            code: 410,
          },
        }) + '\n',
      );
      return;
    }
    throw e;
  }
  stream.open();
  for (const c of initial) stream.send('ADDED', c);
  const replay = held;
  held = undefined;
  for (const ev of replay) onEvent(ev);
  req.on('close', () => stream.close());
  res.on('error', () => stream.close());
  if (Number.isFinite(timeoutMs) && timeoutMs > 0) {
    const t = setTimeout(() => stream.close(), timeoutMs);
    stream.onClose(() => clearTimeout(t));
  }
  if (r.query.get('allowWatchBookmarks') === 'true') {
    const t = setInterval(() => stream.bookmark(String(cache.revision())), BOOKMARK_INTERVAL_MS);
    stream.onClose(() => clearInterval(t));
  }
}
