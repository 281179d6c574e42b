/** Server-side apply: PATCH with `application/apply-patch+yaml`, through the field manager. */
import { parse as parseYaml } from 'yaml';
import { metaTime } from '../../util/metatime.js';
import { applyConfig, ApplyBadRequest } from '../fieldmanager/fieldmanager.js';
import { fieldPathSegments, pathString } from '../fieldmanager/fieldset.js';
import { duplicateEntries, pathElementsOf } from '../fieldmanager/typed.js';
import type { TypeNode } from '../fieldmanager/types.js';
import { readBody, sendAs } from '../http.js';
import { patchKindOf } from '../patch/index.js';
import type { KubeObject } from '../resources/types.js';
import { ApiAlreadyExistsError, ApiNotFoundError, ApiUnknownReasonError, badRequest } from '../status.js';
import {
  apiVersionOf,
  dryRun,
  fieldValidation,
  invalidOptions,
  writeManager,
  type ResourceCall,
  type ResourceRequest,
} from './request.js';
import { admitBody, unknownFieldsOf, updateSubresource, warningHeaders } from './write.js';

/** A PATCH whose Content-Type is an apply patch. */
export function isApply(call: ResourceCall): boolean {
  return patchKindOf(call.req.headers['content-type'] ?? '') === 'apply';
}

/**
 * An applied configuration must fit the kind's schema whatever fieldValidation says (no unknown
 * field, no two list items with one key): kube cannot type it otherwise, and answers 500 with
 * structured-merge-diff's errors.
 */
function refuseUntypedFields(r: ResourceRequest, body: unknown, type: TypeNode): void {
  const d = r.storage.def;
  const unknown = unknownFieldsOf(r, body);
  const paths = [
    ...unknown.map(
      (u) => `${pathString(pathElementsOf(body, type, fieldPathSegments(u)))}: field not declared in schema`,
    ),
    ...duplicateEntries(body, type),
  ];
  if (!paths.length) return;
  const meta = (body as { metadata?: { namespace?: unknown; name?: unknown } }).metadata;
  const nn = `${typeof meta?.namespace === 'string' ? meta.namespace : ''}/${typeof meta?.name === 'string' ? meta.name : ''}`;
  const what = paths.length === 1 ? paths[0]! : ['errors:', ...paths.map((p) => `  ${p}`)].join('\n');
  throw new ApiUnknownReasonError(
    `failed to create typed patch object (${nn}; ${d.group}/${d.version}, Kind=${d.kind}): ${what}`,
  );
}

/**
 * PATCH with `application/apply-patch+yaml`: server-side apply by the `fieldManager` (required),
 * creating the object when it does not exist (kube's applyPatcher with forceAllowCreate).
 */
export async function handleApply({ r, req, res, format }: ResourceCall): Promise<void> {
  const sub = updateSubresource(r);
  const manager = writeManager(r, undefined, 'PatchOptions');
  if (!r.query.get('fieldManager'))
    throw invalidOptions(
      'PatchOptions',
      'fieldManager',
      'FieldValueRequired',
      'Required value: is required for apply patch',
    );
  const force = r.query.get('force') === 'true';
  const dry = dryRun(r.query);
  let body: unknown;
  try {
    body = parseYaml((await readBody(req)).toString('utf8'), { version: '1.1' });
  } catch (e) {
    throw badRequest(`error decoding YAML: ${(e as Error).message}`);
  }
  const version = body && typeof body === 'object' ? (body as { apiVersion?: unknown }).apiVersion : undefined;
  if (version !== apiVersionOf(r)) {
    throw badRequest(
      `Incorrect version specified in apply patch. Specified patch version: ${typeof version === 'string' ? version : ''}, expected: ${apiVersionOf(r)}`,
    );
  }
  const scope = r.storage.fieldScope(sub);
  refuseUntypedFields(r, body, scope.type);
  const { obj: config, warnings } = admitBody(r, body, { fieldValidation: fieldValidation(r.query), origin: 'patch' });
  const applyTo = (live: KubeObject | undefined): KubeObject => {
    try {
      const out = applyConfig(scope, { live, config: structuredClone(config), manager, force, now: metaTime() });
      // Only a resourceVersion the configuration names is a precondition.
      if (config.metadata.resourceVersion === undefined) delete out.metadata.resourceVersion;
      return out;
    } catch (e) {
      if (e instanceof ApplyBadRequest) throw badRequest(e.message);
      throw e;
    }
  };
  for (let attempt = 0; ; attempt++) {
    try {
      const out = await r.storage.update(r.namespace, r.name!, applyTo, {
        dryRun: dry,
        subresource: sub,
        fields: 'applied',
      });
      sendAs(res, format, 200, JSON.stringify(out), warningHeaders(warnings));
      return;
    } catch (e) {
      if (!(e instanceof ApiNotFoundError) || sub !== undefined || r.storage.get(r.namespace, r.name!)) throw e;
    }
    const created = applyTo(undefined);
    if (created.metadata.name === undefined) created.metadata.name = r.name;
    if (created.metadata.name !== r.name)
      throw badRequest(
        `the name of the object (${created.metadata.name}) does not match the name on the URL (${r.name})`,
      );
    try {
      const out = await r.storage.create(created, r.namespace, { dryRun: dry, fields: 'applied' });
      sendAs(res, format, 201, JSON.stringify(out), warningHeaders(warnings));
      return;
    } catch (e) {
      if (!(e instanceof ApiAlreadyExistsError) || attempt > 3) throw e;
    }
  }
}
