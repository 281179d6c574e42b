/** GET of a collection: a list, paged, as JSON, YAML or a Table. */
import { keyPrefix } from '../registry.js';
import { sendAs, sendJson } from '../http.js';
import { ApiTimeoutError, badRequest } from '../status.js';
import { toTable } from '../table.js';
import { decodeContinue, encodeContinue, pageFromCache, pageFromStore, type Page } from './paging.js';
import { apiVersionOf, includeObject, parseLimit, parseRv, selection, type ResourceCall } from './request.js';

/** GET a collection: from the watch cache, or from the store for exact/continued reads. */
export async function handleList({ r, res, store, format }: ResourceCall): Promise<void> {
  const sel = selection(r);
  const limit = parseLimit(r.query);
  const cont = r.query.get('continue');
  const rvMatch = r.query.get('resourceVersionMatch') ?? '';
  const rv = parseRv(r.query.get('resourceVersion'));
  const prefix = keyPrefix(r.storage.def, r.namespace);
  if (rvMatch && rvMatch !== 'NotOlderThan' && rvMatch !== 'Exact')
    throw badRequest(
      `resourceVersionMatch: Unsupported value: "${rvMatch}": supported values: "Exact", "NotOlderThan"`,
    );
  if (rvMatch && rv === undefined)
    throw badRequest(
      'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
    );
  if (cont && rv !== undefined && rv !== 0)
    throw badRequest('specifying resource version is not allowed when using continue');

  let listRev: number;
  let startAfter = '';
  let readFromStore = false;
  if (cont) {
    const t = decodeContinue(cont);
    listRev = t.rv;
    startAfter = t.start;
    readFromStore = r.storage.cache.revision() !== t.rv;
  } else {
    // resourceVersion unset: the most recent data (a consistent read); "0": any the cache has.
    if (rv === undefined) await r.storage.cache.waitFresh();
    else if (rv > r.storage.cache.revision()) await r.storage.cache.waitForRevision(rv);
    listRev = r.storage.cache.revision();
    if (rvMatch === 'Exact' && rv !== undefined && rv !== listRev) {
      listRev = rv;
      readFromStore = true;
    } else if (rv !== undefined && rv > listRev) {
      throw new ApiTimeoutError(`Too large resource version: ${rv}, current: ${listRev}`);
    }
  }
  const page: Page = readFromStore
    ? await pageFromStore(store, prefix, listRev, sel, startAfter, limit, r.storage.def.custom?.fromStorage)
    : pageFromCache(r.storage.cache.list(prefix), sel, startAfter, limit);

  const rvStr = String(listRev);
  const continueToken = page.next ? encodeContinue({ rv: listRev, start: page.next }) : undefined;
  if (format === 'table') {
    const table = toTable(
      r.storage.def,
      page.items.map((c) => c.obj),
      {
        resourceVersion: rvStr,
        continue: continueToken,
        remainingItemCount: page.remaining,
        include: includeObject(r.query),
      },
    );
    sendJson(res, 200, table);
    return;
  }
  // Assemble the list from the cached JSON of each object: no re-serialization of the items.
  const meta: Record<string, unknown> = { resourceVersion: rvStr };
  if (continueToken) meta.continue = continueToken;
  if (page.remaining !== undefined) meta.remainingItemCount = page.remaining;
  const head = `{"kind":${JSON.stringify(r.storage.def.listKind)},"apiVersion":${JSON.stringify(apiVersionOf(r))},"metadata":${JSON.stringify(meta)},"items":[`;
  sendAs(res, format, 200, head + page.items.map((c) => c.json).join(',') + ']}');
}
