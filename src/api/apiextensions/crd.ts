/**
 * apiextensions.k8s.io/v1 CustomResourceDefinition: a cluster-scoped kind with a status
 * subresource, kube's defaults and validation (validation.ts), and the cleanup finalizer its
 * delete adds (the registrar removes every custom resource before the CRD goes).
 */
import type { FieldCause } from '../../util/errors.js';
import { patchMetaFor, schemaFor, setDynamicDefinitions } from '../openapi/schemas.js';
import { keepAllButStatus, keepOldStatus } from '../resources/common.js';
import { validateObjectMeta, validateObjectMetaUpdate } from '../resources/names.js';
import { column } from '../resources/printing.js';
import type { KubeObject, ResourceDef, Schema } from '../resources/types.js';
import { CRD_DEFINITIONS } from './crdschema.js';
import { CLEANUP_FINALIZER, CRD_GROUP, storageVersion, type CRD } from './types.js';
import { validateCRDSpec, validateCRDUpdate, validateNames, validateStoredVersions } from './validation.js';
import { metaTime } from '../../util/metatime.js';

setDynamicDefinitions('apiextensions.k8s.io/v1', CRD_DEFINITIONS);

function asCRD(o: KubeObject): CRD {
  return o as CRD;
}

/** SetDefaults of apiextensions/v1: singular, listKind, conversion None. */
export function defaultCRD(o: KubeObject): void {
  const crd = asCRD(o);
  const spec = (crd.spec ??= {} as CRD['spec']);
  if (spec.names?.kind) {
    spec.names.singular ??= spec.names.kind.toLowerCase();
    spec.names.listKind ??= `${spec.names.kind}List`;
  }
  spec.conversion ??= { strategy: 'None' };
  for (const v of spec.versions ?? []) {
    for (const c of v.additionalPrinterColumns ?? []) c.priority ??= 0;
  }
}

/** A version becoming the storage version joins storedVersions (kube's strategy does this on every write). */
function recordStorageVersion(crd: CRD): void {
  const storage = storageVersion(crd);
  if (!storage) return;
  crd.status ??= {};
  const stored = crd.status.storedVersions ?? [];
  if (!stored.includes(storage)) crd.status.storedVersions = [...stored, storage];
}

const CREATED_AT_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

let schema: Schema | undefined;
let patch: ReturnType<typeof patchMetaFor> | undefined;

export const customResourceDefinitionResource: ResourceDef = {
  group: CRD_GROUP,
  version: 'v1',
  kind: 'CustomResourceDefinition',
  listKind: 'CustomResourceDefinitionList',
  plural: 'customresourcedefinitions',
  singular: 'customresourcedefinition',
  namespaced: false,
  shortNames: ['crd', 'crds'],
  categories: ['api-extensions'],
  hasStatus: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  get schema(): Schema {
    schema ??= schemaFor(CRD_GROUP, 'v1', 'CustomResourceDefinition');
    return schema;
  },
  fieldSelectors: {},
  // kube's default table for CRDs: the name and when it was created.
  columns: [
    { ...column('Name', 'Name must be unique within a namespace.', { format: 'name' }) },
    column('Created At', CREATED_AT_DESCRIPTION, { type: 'date' }),
  ],
  row: (o) => [o.metadata.name ?? '', o.metadata.creationTimestamp ?? null],
  defaults: defaultCRD,
  deletionFinalizers: [CLEANUP_FINALIZER],
  prepareForCreate(o) {
    defaultCRD(o);
    const crd = asCRD(o);
    crd.status = { storedVersions: [] };
    recordStorageVersion(crd);
    o.metadata.generation = 1;
  },
  prepareForUpdate(o, old) {
    keepOldStatus(o, old);
    defaultCRD(o);
    recordStorageVersion(asCRD(o));
  },
  prepareForStatusUpdate(o, old) {
    keepAllButStatus(o, old, { resetMeta: true });
  },
  beforeDeletionMarked(o) {
    // kube's CRD delete: Terminating=True until every custom resource is gone.
    const crd = asCRD(o);
    crd.status ??= {};
    const conditions = (crd.status.conditions ?? []).filter((c) => c.type !== 'Terminating');
    conditions.push({
      type: 'Terminating',
      status: 'True',
      lastTransitionTime: metaTime(),
      reason: 'InstanceDeletionPending',
      message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
    });
    crd.status.conditions = conditions;
  },
  validateCreate(o): FieldCause[] {
    return [...validateObjectMeta(o.metadata, { namespaced: false }), ...validateCRDSpec(asCRD(o))];
  },
  validateUpdate(o, old): FieldCause[] {
    return [...validateObjectMetaUpdate(o.metadata, old.metadata), ...validateCRDUpdate(asCRD(o), asCRD(old))];
  },
  validateStatusUpdate(o, old): FieldCause[] {
    const crd = asCRD(o);
    const out = [...validateObjectMetaUpdate(o.metadata, old.metadata), ...validateStoredVersions(crd)];
    if (crd.status?.acceptedNames?.plural) out.push(...validateNames(crd.status.acceptedNames, 'status.acceptedNames'));
    return out;
  },
  patchMeta(path) {
    patch ??= patchMetaFor(CRD_GROUP, 'v1', 'CustomResourceDefinition');
    return patch(path);
  },
};
