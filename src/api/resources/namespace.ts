import { NODE_LEASE_NAMESPACE } from '../../kube/names.js';
import { NAMESPACE_PHASES } from '../../kube/phases.js';
import type { FieldCause } from '../../util/errors.js';
import { patchMetaFor, schemaFor } from '../openapi/schemas.js';
import { ensureObject, keepSpec, keepStatus, objectAt, strAt } from './corehelpers.js';
import { forbidden, notSupported } from './fielderrors.js';
import { nameIsDNSLabel, validateFinalizers, validateObjectMeta, validateObjectMetaUpdate } from './names.js';
import { age, ageColumn, column, nameColumn } from './printing.js';
import type { KubeObject, PartialUpdateSubresource, ResourceDef } from './types.js';

/** The finalizer the namespace controller removes once the namespace's content is gone. */
export const NAMESPACE_FINALIZER = 'kubernetes';
/** Label kube-apiserver sets on every namespace to its own name (immutable, selectable). */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';
/** The namespaces kube-apiserver makes at start. */
export const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', NODE_LEASE_NAMESPACE] as const;

function specOf(obj: KubeObject): Record<string, unknown> {
  return ensureObject(obj, 'spec');
}

/** Every namespace carries `kubernetes.io/metadata.name: <name>`, whatever the client sent. */
function setNameLabel(obj: KubeObject): void {
  if (!obj.metadata.name) return;
  obj.metadata.labels = { ...(obj.metadata.labels ?? {}), [NAMESPACE_NAME_LABEL]: obj.metadata.name };
}

function finalizersOf(obj: KubeObject): string[] {
  const f = objectAt(obj, 'spec')?.finalizers;
  return Array.isArray(f) ? f.filter((x): x is string => typeof x === 'string') : [];
}

function validateSpec(obj: KubeObject): FieldCause[] {
  return validateFinalizers(finalizersOf(obj), 'spec.finalizers');
}

export const namespaceResource: ResourceDef = {
  group: '',
  version: 'v1',
  kind: 'Namespace',
  listKind: 'NamespaceList',
  plural: 'namespaces',
  singular: 'namespace',
  namespaced: false,
  shortNames: ['ns'],
  categories: [],
  hasStatus: true,
  // kube-apiserver serves no deletecollection on namespaces.
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  schema: schemaFor('', 'v1', 'Namespace'),
  fieldSelectors: {
    'status.phase': (o) => strAt(objectAt(o, 'status'), 'phase'),
  },
  columns: [nameColumn(), column('Status', 'The status of the namespace'), ageColumn()],
  row: (o, now) => [o.metadata.name ?? '', strAt(objectAt(o, 'status'), 'phase'), age(o, now)],

  // kube sets the name label in SetDefaults_Namespace: it is the creator's field.
  defaults: setNameLabel,
  prepareForCreate(obj) {
    obj.status = { phase: 'Active' };
    const spec = specOf(obj);
    const f = finalizersOf(obj);
    if (!f.includes(NAMESPACE_FINALIZER)) spec.finalizers = [...f, NAMESPACE_FINALIZER];
    setNameLabel(obj);
  },
  prepareForUpdate(obj, old) {
    // spec.finalizers only change through /finalize; status only through /status.
    const spec = specOf(obj);
    const oldFinalizers = objectAt(old, 'spec')?.finalizers;
    if (oldFinalizers === undefined) delete spec.finalizers;
    else spec.finalizers = structuredClone(oldFinalizers);
    keepStatus(obj, old);
    setNameLabel(obj);
  },
  prepareForStatusUpdate(obj, old) {
    keepSpec(obj, old);
    setNameLabel(obj);
  },
  validateCreate(obj) {
    return [...validateObjectMeta(obj.metadata, { namespaced: false, nameFn: nameIsDNSLabel }), ...validateSpec(obj)];
  },
  validateUpdate(obj, old) {
    return [...validateObjectMetaUpdate(obj.metadata, old.metadata), ...validateSpec(obj)];
  },
  validateStatusUpdate(obj, old) {
    const out = validateObjectMetaUpdate(obj.metadata, old.metadata);
    const phase = strAt(objectAt(obj, 'status'), 'phase');
    if (phase && !(NAMESPACE_PHASES as readonly string[]).includes(phase)) {
      out.push(notSupported('status.phase', phase, NAMESPACE_PHASES));
    } else if (!obj.metadata.deletionTimestamp && phase !== 'Active') {
      out.push(forbidden('status.phase', "may only be 'Active' if `deletionTimestamp` is empty"));
    } else if (obj.metadata.deletionTimestamp && phase !== 'Terminating') {
      out.push(forbidden('status.phase', "may only be 'Terminating' if `deletionTimestamp` is not empty"));
    }
    return out;
  },
  patchMeta: patchMetaFor('', 'v1', 'Namespace'),
  subresources: [finalize()],
  // The namespace is held by its spec.finalizers (the "kubernetes" finalizer) as well.
  extraFinalizersPending: (obj) => finalizersOf(obj).length > 0,
  beforeDeletionMarked(obj) {
    obj.status = { ...(objectAt(obj, 'status') ?? {}), phase: 'Terminating' };
  },
  returnDeletedObject: true,
  isNamespace: true,
  initialObjects: DEFAULT_NAMESPACES.map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })),
};

/** PUT namespaces/<name>/finalize: the namespace controller empties spec.finalizers through it; nothing else changes. */
function finalize(): PartialUpdateSubresource {
  return {
    type: 'partialUpdate',
    name: 'finalize',
    prepareForUpdate(obj, old) {
      const kept = structuredClone(old);
      kept.spec = { ...(objectAt(old, 'spec') ?? {}), finalizers: objectAt(obj, 'spec')?.finalizers };
      Object.assign(obj, kept);
      return [];
    },
  };
}
