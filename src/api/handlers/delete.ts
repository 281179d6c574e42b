/** DELETE of one object or of a collection. */
import type { IncomingMessage } from 'node:http';
import { decodeBody, readBody, sendAs } from '../http.js';
import { decodeTyped } from '../decode/index.js';
import { PROPAGATION_POLICIES, type PropagationPolicy } from '../gcfinalizers.js';
import { keyPrefix } from '../registry.js';
import type { KubeObject } from '../resources/types.js';
import { ApiNotFoundError, badRequest, methodNotAllowed, successStatus } from '../status.js';
import { apiVersionOf, dryRun, selection, type ResourceCall, type ResourceRequest } from './request.js';

interface DeleteBody {
  propagationPolicy?: PropagationPolicy;
  orphanDependents?: boolean;
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: string[];
}

function isPropagationPolicy(v: unknown): v is PropagationPolicy {
  return PROPAGATION_POLICIES.some((p) => p === v);
}

/** DeleteOptions from the body (optional) and the query, which wins. */
async function deleteOptions(r: ResourceRequest, req: IncomingMessage): Promise<DeleteBody> {
  const raw = await readBody(req);
  let parsed: unknown;
  if (raw.length && raw.toString('utf8').trim()) {
    parsed = decodeBody(raw, req.headers['content-type']);
    decodeTyped({ group: '', version: 'v1', kind: 'DeleteOptions' }, parsed, 'body');
  }
  const b: Record<string, unknown> =
    parsed && typeof parsed === 'object' ? { ...(parsed as Record<string, unknown>) } : {};
  const g = r.query.get('gracePeriodSeconds');
  if (g !== null) {
    const n = Number(g);
    if (!Number.isInteger(n)) throw badRequest(`invalid gracePeriodSeconds: ${g}`);
    b.gracePeriodSeconds = n;
  }
  const pp = r.query.get('propagationPolicy');
  if (pp) b.propagationPolicy = pp;
  const od = r.query.get('orphanDependents');
  if (od !== null) {
    if (od !== 'true' && od !== 'false') throw badRequest(`invalid orphanDependents: ${od}`);
    b.orphanDependents = od === 'true';
  }
  if (b.propagationPolicy !== undefined && b.propagationPolicy !== null && !isPropagationPolicy(b.propagationPolicy)) {
    throw badRequest(
      `propagationPolicy: Unsupported value: "${String(b.propagationPolicy)}": supported values: "Foreground", "Background", "Orphan"`,
    );
  }
  if (b.orphanDependents !== undefined && b.orphanDependents !== null && typeof b.orphanDependents !== 'boolean') {
    throw badRequest('orphanDependents: must be a boolean');
  }
  const body: DeleteBody = {
    propagationPolicy: isPropagationPolicy(b.propagationPolicy) ? b.propagationPolicy : undefined,
    orphanDependents: typeof b.orphanDependents === 'boolean' ? b.orphanDependents : undefined,
    gracePeriodSeconds: typeof b.gracePeriodSeconds === 'number' ? b.gracePeriodSeconds : undefined,
    preconditions:
      b.preconditions && typeof b.preconditions === 'object'
        ? (b.preconditions as DeleteBody['preconditions'])
        : undefined,
    dryRun: Array.isArray(b.dryRun) ? b.dryRun.filter((x): x is string => typeof x === 'string') : undefined,
  };
  // ValidateDeleteOptions: the deprecated flag and the policy cannot both be given.
  if (body.orphanDependents !== undefined && body.propagationPolicy !== undefined) {
    throw badRequest('DeleteOptions: orphanDependents and propagationPolicy cannot be both set');
  }
  return body;
}

/**
 * DELETE one object. The answer is the object while it is still there (finalizers, graceful
 * deletion) or when its kind says so (returnDeletedObject); otherwise a Success Status.
 */
export async function handleDelete({ r, req, res, format }: ResourceCall): Promise<void> {
  if (r.subresource) throw methodNotAllowed();
  const body = await deleteOptions(r, req);
  const result = await r.storage.delete(r.namespace, r.name!, {
    dryRun: dryRun(r.query) || (body.dryRun ?? []).includes('All'),
    gracePeriodSeconds: body.gracePeriodSeconds,
    preconditions: body.preconditions,
    propagationPolicy: body.propagationPolicy,
    orphanDependents: body.orphanDependents,
  });
  const d = r.storage.def;
  if (result.kind === 'pending' || d.returnDeletedObject) {
    sendAs(res, format, 200, JSON.stringify(result.obj));
    return;
  }
  sendAs(
    res,
    format,
    200,
    JSON.stringify(
      successStatus({ name: r.name, group: d.group || undefined, kind: d.plural, uid: result.obj.metadata.uid }),
    ),
  );
}

/** DELETE a collection: every selected object, each as a single delete would; answers the list of them. */
export async function handleDeleteCollection({ r, req, res, format }: ResourceCall): Promise<void> {
  const sel = selection(r);
  const body = await deleteOptions(r, req);
  const dry = dryRun(r.query);
  const victims = r.storage.cache.list(keyPrefix(r.storage.def, r.namespace)).filter((c) => sel.matches(c.obj));
  const deleted: KubeObject[] = [];
  for (const c of victims) {
    try {
      const out = await r.storage.delete(c.obj.metadata.namespace, c.obj.metadata.name!, {
        dryRun: dry,
        gracePeriodSeconds: body.gracePeriodSeconds,
        propagationPolicy: body.propagationPolicy,
        orphanDependents: body.orphanDependents,
      });
      deleted.push(out.obj);
    } catch (e) {
      if (e instanceof ApiNotFoundError) continue;
      throw e;
    }
  }
  const d = r.storage.def;
  sendAs(
    res,
    format,
    200,
    JSON.stringify({
      kind: d.listKind,
      apiVersion: apiVersionOf(r),
      metadata: { resourceVersion: String(r.storage.cache.revision()) },
      items: deleted,
    }),
  );
}
