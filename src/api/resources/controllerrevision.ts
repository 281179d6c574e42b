/** apps/v1 ControllerRevision: an immutable snapshot of a workload's template (ValidateControllerRevision). */
import type { FieldCause } from '../../util/errors.js';
import { baseResourceDef } from './common.js';

import { FIELD_IMMUTABLE, invalid, required } from './fielderrors.js';

import { nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from './names.js';

import { age, ageColumn, column, nameColumn } from './printing.js';

import type { KubeObject } from './types.js';
import { jsonEqual } from '../../util/jsonequal.js';

function validateRevision(o: KubeObject): FieldCause[] {
  const out: FieldCause[] = [];
  if (o.data === undefined || o.data === null) out.push(required('data'));
  const r = o.revision;
  if (typeof r !== 'number' || !Number.isInteger(r) || r < 0)
    out.push(invalid('revision', r as number, 'must be greater than or equal to 0'));
  return out;
}

/** The CONTROLLER cell: `<kind>.<group>/<name>` of the controller owner (kube's formatResourceName), or `<none>`. */
export function controllerCell(o: KubeObject): string {
  const ref = (o.metadata.ownerReferences ?? []).find((r) => r.controller === true);
  if (!ref) return '<none>';
  const apiVersion = String(ref.apiVersion ?? '');
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const kind = String(ref.kind ?? '').toLowerCase();
  return `${group ? `${kind}.${group}` : kind}/${String(ref.name ?? '')}`;
}

export const controllerRevisionResource = baseResourceDef({
  group: 'apps',
  version: 'v1',
  kind: 'ControllerRevision',
  plural: 'controllerrevisions',
  namespaced: true,
  hasStatus: false,
  columns: [
    nameColumn(),
    column('Controller', 'Controller of the object'),
    column('Revision', 'Revision indicates the revision of the state represented by Data.', { type: 'integer' }),
    ageColumn(),
  ],
  row: (o, now) => [o.metadata.name ?? '', controllerCell(o), Number(o.revision ?? 0), age(o, now)],
  validateCreate: (o) => [
    ...validateObjectMeta(o.metadata, { namespaced: true, nameFn: nameIsDNSSubdomain }),
    ...validateRevision(o),
  ],
  validateUpdate: (o, old) => [
    ...validateObjectMetaUpdate(o.metadata, old.metadata),
    ...validateRevision(o),
    ...(jsonEqual(o.data, old.data)
      ? []
      : [invalid('data', { rendered: 'runtime.RawExtension{...}' }, FIELD_IMMUTABLE)]),
  ],
});
