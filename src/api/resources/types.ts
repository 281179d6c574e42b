import type { FieldCause } from '../../util/errors.js';
import type { Authorizer, UserInfo } from '../authz.js';
import type { PatchMeta } from '../patch/types.js';

/** Any Kubernetes object as JSON: apiVersion, kind, metadata and the rest. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: Array<Record<string, unknown>>;
  managedFields?: unknown[];
  [field: string]: unknown;
}

/** A column as kube-apiserver declares it in a meta.k8s.io/v1 Table. */
export interface TableColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format: string; // e.g. 'name', '' ...
  description: string;
  /** 0 = shown by default; 1 = only with -o wide. */
  priority: number;
}

/** A JSON Schema (OpenAPI v3 subset) node. */
export interface Schema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  format?: string;
  description?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  required?: string[];
  enum?: unknown[];
  /** Kubernetes' int-or-string, quantity and other "any scalar" fields. */
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-patch-merge-key'?: string;
  'x-kubernetes-patch-strategy'?: string;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-group-version-kind'?: Array<{ group: string; version: string; kind: string }>;
  $ref?: string;
  allOf?: Schema[];
  oneOf?: Schema[];
  default?: unknown;
}

export interface FieldSelectorFields {
  /** field path (e.g. `spec.nodeName`) → value extractor; metadata.name/namespace are always supported. */
  readonly [field: string]: (obj: KubeObject) => string;
}

/** Context passed to admission hooks. */
export interface AdmissionContext {
  /** Current time (ISO-8601 seconds precision, as Kubernetes' metav1.Time). */
  readonly now: string;
  /** Read another object (already stored) — e.g. the StorageClasses for the default class. */
  readonly list: (kind: string, namespace?: string) => readonly KubeObject[];
  readonly get: (kind: string, name: string, namespace?: string) => KubeObject | undefined;
}

/** The group, version and kind of the objects a subresource takes or returns (discovery's responseKind). */
export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/**
 * A subresource that rewrites part of the object from a body of the object's own kind, through PUT
 * (and PATCH): e.g. `namespaces/finalize`, which may change only spec.finalizers.
 */
export interface PartialUpdateSubresource {
  readonly type: 'partialUpdate';
  readonly name: string;
  /**
   * Builds what gets stored: `old` with only what this subresource may change taken from `obj`.
   * Mutates `obj`; returns the field causes of a refusal (empty when valid).
   */
  prepareForUpdate(obj: KubeObject, old: KubeObject): FieldCause[];
}

/**
 * A subresource POSTed with a body of another kind that changes the object, e.g. `pods/binding`
 * (a Binding that sets spec.nodeName). Answered with a Success Status (201).
 */
export interface ActionSubresource {
  readonly type: 'action';
  readonly name: string;
  /** Kind of the body (and of the subresource in discovery). */
  readonly bodyKind: GroupVersionKind;
  /** Checks the decoded body before the object is read; throws an HttpError subclass to refuse it. */
  validateBody(body: unknown): void;
  /**
   * The object after the action: a fresh object computed from `current` (never modify it) and the
   * body, or a thrown refusal (e.g. a Conflict when the pod is already bound).
   */
  apply(current: KubeObject, body: unknown, name: string): KubeObject;
}

/** What a review kind answers from: who asked, and the authorizer that guards their requests. */
export interface ReviewContext {
  readonly user: UserInfo;
  readonly authorizer: Authorizer;
}

/**
 * `pods/eviction`: a POSTed policy/v1 Eviction that deletes the pod when its disruption budget
 * allows, spending the budget (served by handlers/eviction.ts, which reaches the budgets).
 */
export interface EvictionSubresource {
  readonly type: 'eviction';
  readonly name: string;
  readonly bodyKind: GroupVersionKind;
}

/**
 * `<kind>/scale`: an autoscaling/v1 Scale read from and written to the object's replica count
 * (kube's ScaleREST of deployments, replicasets, statefulsets). `scale.ts` builds one.
 */
export interface ScaleSubresource {
  readonly type: 'scale';
  readonly name: 'scale';
  /** Field path of the desired replicas (`spec.replicas`). */
  readonly specReplicasPath: readonly string[];
  /** Field path of the observed replicas (`status.replicas`). */
  readonly statusReplicasPath: readonly string[];
  /** The Scale's status.selector: the object's pod selector as a label-selector string. */
  selector(obj: KubeObject): string;
}

/**
 * A subresource served by the object's node, not the store: `pods/log` (get) and `pods/exec`,
 * `pods/attach` (create; a WebSocket upgrade). Served by handlers/podstream.ts.
 */
export interface StreamSubresource {
  readonly type: 'stream';
  readonly name: string;
  /** Discovery's responseKind: Pod for log, PodExecOptions / PodAttachOptions for the others. */
  readonly kind: GroupVersionKind;
  readonly verbs: readonly string[];
}

/** A subresource beyond `/status` (which `hasStatus` declares). */
export type SubresourceDef =
  PartialUpdateSubresource | ActionSubresource | EvictionSubresource | ScaleSubresource | StreamSubresource;

/**
 * Everything the generic REST handler needs to serve one kind. One file per kind under
 * `src/api/resources/<kind>.ts`; `index.ts` lists them all.
 */
export interface ResourceDef {
  readonly group: string; // '' for core
  readonly version: string;
  readonly kind: string;
  readonly listKind: string;
  readonly plural: string;
  readonly singular: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  /** Whether the kind has a `/status` subresource (status ignored on the main resource). */
  readonly hasStatus: boolean;
  /** Verbs for discovery. */
  readonly verbs: readonly string[];
  /** OpenAPI v3 schema of the whole object (used for strict field validation and /openapi/v3). */
  readonly schema: Schema;
  /** Extra field selectors beyond metadata.name / metadata.namespace. */
  readonly fieldSelectors: FieldSelectorFields;
  /** Table columns at the reported Kubernetes minor version. */
  readonly columns: readonly TableColumn[];
  /** Row cells for one object (same order as columns). `now` in ms since epoch for AGE. */
  row(obj: KubeObject, now: number): unknown[];
  /**
   * kube's decode-time defaulting (SetDefaults_*), idempotent. The hooks below apply it too; the
   * field manager records a request as decoded and defaulted, so defaulted fields are the writer's.
   */
  defaults?(obj: KubeObject): void;
  /**
   * Strategy hook on create, before validation: defaults, status reset (e.g. PV phase Pending).
   * Mutates `obj` in place.
   */
  prepareForCreate(obj: KubeObject, ctx: AdmissionContext): void;
  /**
   * Strategy hook on update of the main resource (not /status): `obj` is the incoming object; keep
   * `old`'s status when the kind has a status subresource, apply defaults. Mutates `obj`.
   */
  prepareForUpdate(obj: KubeObject, old: KubeObject, ctx: AdmissionContext): void;
  /** Hook for `/status` updates: keep everything from `old` except status. Mutates `obj`. */
  prepareForStatusUpdate(obj: KubeObject, old: KubeObject, ctx: AdmissionContext): void;
  /**
   * The kind's mutating admission plugins (DefaultStorageClass, StorageObjectInUseProtection,
   * Priority, DefaultTolerationSeconds) on a create (`old` undefined) or an update of the main
   * resource. kube-apiserver runs them after the field manager has recorded the request, so what
   * they add belongs to no manager. Mutates `obj`.
   */
  mutatingAdmission?(obj: KubeObject, old: KubeObject | undefined, ctx: AdmissionContext): void;
  validateCreate(obj: KubeObject, ctx: AdmissionContext): FieldCause[];
  validateUpdate(obj: KubeObject, old: KubeObject, ctx: AdmissionContext): FieldCause[];
  validateStatusUpdate(obj: KubeObject, old: KubeObject, ctx: AdmissionContext): FieldCause[];
  /** Strategic-merge-patch metadata for a path of field names inside this kind. */
  patchMeta(path: readonly string[]): PatchMeta;

  // Optional per-kind hooks of the generic registry; absent means the generic behaviour.

  /** Subresources other than `/status`. */
  readonly subresources?: readonly SubresourceDef[];
  /**
   * Grace period in seconds for deleting `obj`, or undefined for an immediate delete (the default).
   * `requested` is DeleteOptions.gracePeriodSeconds. Pods on a node are deleted gracefully.
   */
  gracefulDeletion?(obj: KubeObject, requested: number | undefined): number | undefined;
  /**
   * Finalizers kept outside metadata.finalizers that also hold the object while it is deleted
   * (a namespace's spec.finalizers). True while any is left.
   */
  extraFinalizersPending?(obj: KubeObject): boolean;
  /** Called on the copy that is about to get its deletionTimestamp (e.g. phase Terminating). Mutates `obj`. */
  beforeDeletionMarked?(obj: KubeObject): void;
  /** DELETE answers with the deleted object rather than a Success Status (kube's ReturnDeletedObject). */
  readonly returnDeletedObject?: boolean;
  /** This kind is the namespace itself: namespaced objects are created only in an existing, live one. */
  readonly isNamespace?: boolean;
  /** Creates are allowed in a namespace that is being terminated (Events, as kube's lifecycle admission). */
  readonly creatableInTerminatingNamespace?: boolean;
  /**
   * A create-only virtual kind (SelfSubjectAccessReview…): a validated POST answers 201 with what
   * this returns, and nothing is stored.
   */
  review?(obj: KubeObject, ctx: ReviewContext): KubeObject;
  /** Objects the server creates at start when they are missing (e.g. the default namespaces). */
  readonly initialObjects?: readonly KubeObject[];
  /**
   * Finalizers the delete itself adds before marking the object (kube's CRD REST Delete adds
   * `customresourcecleanup.apiextensions.k8s.io`, so that its objects go first).
   */
  readonly deletionFinalizers?: readonly string[];
  /** Set for the kinds CustomResourceDefinitions define (src/api/apiextensions): what differs for them. */
  readonly custom?: CustomResourceHooks;
}

/** How the server treats a custom resource where a built-in kind has Go types and fixed rules. */
export interface CustomResourceHooks {
  /** Checks a decoded body in place of typed decoding (only metadata is typed); throws a 400 Status. */
  decode(obj: Record<string, unknown>): void;
  /** Warnings every answer of this version carries (a deprecated version's deprecationWarning). */
  readonly warnings: readonly string[];
  /** Turns an object read from storage (any version of the kind) into this version (conversion None). */
  fromStorage(obj: KubeObject): void;
  /** The CRD's uid: a recreated CRD of the same name serves a new set of storages. */
  readonly crdUid: string;
  /** Whether the CRD is being deleted: creates are refused meanwhile (kept current by the registrar). */
  terminating(): boolean;
}
