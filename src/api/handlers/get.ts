/** GET of one object (or of its `/status`, the same object). */
import { sendAs, sendJson } from '../http.js';
import { pathNotFound } from '../status.js';
import { toTable } from '../table.js';
import { includeObject, type ResourceCall } from './request.js';
import { handleScaleGet } from './scale.js';

/** GET one object (or its `/status`, the same object). */
export async function handleGet(call: ResourceCall): Promise<void> {
  const { r, res, format } = call;
  const scale = r.subresource ? r.storage.subresource(r.subresource) : undefined;
  if (scale?.type === 'scale') return handleScaleGet(call, scale);
  const c = await r.storage.mustGetCurrent(r.namespace, r.name!);
  if (r.subresource && r.subresource !== 'status') throw pathNotFound();
  if (format === 'table') {
    sendJson(
      res,
      200,
      toTable(r.storage.def, [c.obj], {
        resourceVersion: c.obj.metadata.resourceVersion,
        include: includeObject(r.query),
      }),
    );
    return;
  }
  sendAs(res, format, 200, c.json);
}
