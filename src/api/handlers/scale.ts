/** GET, PUT and PATCH of `<kind>/scale`: an autoscaling/v1 Scale over the object's replica count. */
import { decodeBody, readBody, sendAs } from '../http.js';
import { decodeTyped } from '../decode/index.js';
import { patchMetaFor } from '../openapi/schemas.js';
import { applyPatch } from '../patch/index.js';
import { formatInvalidMessage } from '../resources/fielderrors.js';
import { SCALE_KIND, scaleOf, validateScale, withScaledReplicas } from '../resources/scale.js';
import type { KubeObject, ScaleSubresource } from '../resources/types.js';
import { badRequest, invalid } from '../status.js';
import { dryRun, patchResourceVersion, readPatchBody, writeManager, type ResourceCall } from './request.js';

let scalePatchMeta: ReturnType<typeof patchMetaFor> | undefined;

function admitScale(body: unknown, name: string): KubeObject {
  decodeTyped(SCALE_KIND, body, 'body');
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw badRequest('the body of the request was in an unknown format');
  const scale = body as KubeObject;
  scale.metadata ??= {};
  if (scale.metadata.name !== undefined && scale.metadata.name !== name) {
    throw badRequest(`the name of the object (${scale.metadata.name}) does not match the name on the URL (${name})`);
  }
  const causes = validateScale(scale);
  if (causes.length)
    throw invalid(
      SCALE_KIND.kind,
      SCALE_KIND.group,
      name,
      causes,
      formatInvalidMessage(SCALE_KIND.kind, name, causes, SCALE_KIND.group),
    );
  return scale;
}

/** The object with the Scale's replicas; the Scale's resourceVersion, when given, is the precondition. */
function scaled(sub: ScaleSubresource, current: KubeObject, scale: KubeObject): KubeObject {
  const out = withScaledReplicas(sub, current, scale);
  const rv = scale.metadata.resourceVersion;
  if (rv) out.metadata.resourceVersion = rv;
  else delete out.metadata.resourceVersion;
  return out;
}

export async function handleScaleGet({ r, res, format }: ResourceCall, sub: ScaleSubresource): Promise<void> {
  const c = await r.storage.mustGetCurrent(r.namespace, r.name!);
  sendAs(res, format, 200, JSON.stringify(scaleOf(sub, c.obj)));
}

export async function handleScaleUpdate({ r, req, res, format }: ResourceCall, sub: ScaleSubresource): Promise<void> {
  const name = r.name!;
  const scale = admitScale(decodeBody(await readBody(req), req.headers['content-type']), name);
  const fields = { update: writeManager(r, req.headers['user-agent'], 'UpdateOptions'), subresource: 'scale' };
  const out = await r.storage.update(r.namespace, name, (cur) => scaled(sub, cur, scale), {
    dryRun: dryRun(r.query),
    fields,
  });
  sendAs(res, format, 200, JSON.stringify(scaleOf(sub, out)));
}

export async function handleScalePatch({ r, req, res, format }: ResourceCall, sub: ScaleSubresource): Promise<void> {
  const name = r.name!;
  const fields = { update: writeManager(r, req.headers['user-agent'], 'PatchOptions'), subresource: 'scale' };
  const patch = await readPatchBody(req);
  scalePatchMeta ??= patchMetaFor(SCALE_KIND.group, SCALE_KIND.version, SCALE_KIND.kind);
  const lookup = scalePatchMeta;
  const out = await r.storage.update(
    r.namespace,
    name,
    (cur) => {
      const patched = applyPatch(req.headers['content-type'] ?? '', scaleOf(sub, cur), patch, lookup);
      const scale = admitScale(patched, name);
      // A patch that does not name a resourceVersion must not turn the current one into a precondition.
      if (patchResourceVersion(patch) === undefined) delete scale.metadata.resourceVersion;
      return scaled(sub, cur, scale);
    },
    { dryRun: dryRun(r.query), fields },
  );
  sendAs(res, format, 200, JSON.stringify(scaleOf(sub, out)));
}
