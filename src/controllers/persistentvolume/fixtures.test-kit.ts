/**
 * Test kit: an in-memory API server behind the Effects interface (optimistic concurrency on
 * resourceVersion, status subresource semantics), a write log, an event log, failure injection,
 * and builders for volumes and claims. Only imported by *.test.ts files.
 */
import { newPvControllerCache } from './cache.js';
import type { SyncContext } from './context.js';
import {
  DEFAULT_OPTIONS,
  claimKey,
  type ControllerEvent,
  type ControllerOptions,
  type Effects,
  type Listers,
  type Node,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type Pod,
  type StorageClass,
} from './types.js';
import { ConflictError, NotFoundError, type StowageError, UnavailableError } from '../../util/errors.js';

/** Deep-freeze: the controller must never mutate objects it did not create (cache and API results). */
export function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

export type WriteOp = 'updateVolume' | 'updateVolumeStatus' | 'deleteVolume' | 'updateClaim' | 'updateClaimStatus';
export interface Write {
  readonly op: WriteOp;
  readonly name: string;
}

export interface KitInit {
  volumes?: PersistentVolume[];
  claims?: PersistentVolumeClaim[];
  classes?: StorageClass[];
  pods?: Pod[];
  nodes?: Node[];
  options?: Partial<ControllerOptions>;
  /** Claims the informer has but the controller cache has not seen yet. */
  informerOnlyClaims?: PersistentVolumeClaim[];
}

export class Kit {
  readonly volumes = new Map<string, PersistentVolume>();
  readonly claims = new Map<string, PersistentVolumeClaim>();
  readonly writes: Write[] = [];
  readonly events: ControllerEvent[] = [];
  readonly enqueued: string[] = [];
  /** The delay of the last delayed enqueue of each claim key. */
  readonly enqueuedAfterMs = new Map<string, number>();
  readonly operations: Array<{ name: string; op: () => Promise<void> }> = [];
  readonly removedPaths: string[] = [];
  ctx: SyncContext;
  private rv = 100;
  private writesLeft = Infinity;
  private readonly failures = new Map<WriteOp, StowageError[]>();
  recycler: ((v: PersistentVolume) => Promise<void>) | undefined;
  private hooks: Array<{ op: WriteOp; name: string; f: () => void }> = [];

  constructor(private readonly init: KitInit) {
    for (const v of init.volumes ?? []) this.volumes.set(v.metadata?.name ?? '', this.stamp(v));
    for (const c of init.claims ?? []) this.claims.set(claimKey(c), this.stamp(c));
    this.ctx = this.newContext();
  }

  /** A controller (re)start: a fresh cache filled from the server's current state. */
  restart(): void {
    this.writesLeft = Infinity;
    this.ctx = this.newContext();
  }

  /** Simulate a crash after `n` more successful writes: later writes fail. */
  crashAfter(n: number): void {
    this.writesLeft = n;
  }

  failNext(op: WriteOp, err: StowageError): void {
    const l = this.failures.get(op) ?? [];
    l.push(err);
    this.failures.set(op, l);
  }

  /** A volume created on the server (and delivered by the informer) that the controller cache has not seen. */
  createVolume(v: PersistentVolume): void {
    this.volumes.set(v.metadata?.name ?? '', this.stamp(v));
  }

  /** Run `f` once, right after the next successful write `op` on `name` (to interleave another client). */
  afterWrite(op: WriteOp, name: string, f: () => void): void {
    this.hooks.push({ op, name, f });
  }

  volume(name: string): PersistentVolume | undefined {
    return this.volumes.get(name);
  }

  claim(key: string): PersistentVolumeClaim | undefined {
    return this.claims.get(key);
  }

  /** Run scheduled operations (as the operation executor would), in order. */
  async runOperations(): Promise<Array<unknown>> {
    const errors: unknown[] = [];
    while (this.operations.length > 0) {
      const o = this.operations.shift();
      if (!o) break;
      try {
        await o.op();
      } catch (e) {
        errors.push(e);
      }
    }
    return errors;
  }

  private stamp<T extends { metadata?: { resourceVersion?: string } }>(o: T): T {
    const c = structuredClone(o);
    c.metadata = { ...(c.metadata ?? {}), resourceVersion: String(++this.rv) };
    return c;
  }

  private gate(op: WriteOp, name: string): void {
    const f = this.failures.get(op)?.shift();
    if (f) throw f;
    if (this.writesLeft <= 0) throw new UnavailableError(`crashed before ${op} ${name}`);
    this.writesLeft--;
  }

  private write<T extends { metadata?: { resourceVersion?: string; name?: string } }>(
    store: Map<string, T>,
    key: string,
    op: WriteOp,
    obj: T,
    status: boolean,
  ): T {
    this.gate(op, key);
    const cur = store.get(key);
    if (!cur) throw new NotFoundError(`"${key}" not found`);
    if (obj.metadata?.resourceVersion !== cur.metadata?.resourceVersion) {
      throw new ConflictError(
        `Operation cannot be fulfilled on "${key}": the object has been modified; please apply your changes to the latest version and try again`,
      );
    }
    const curStatus = (cur as { status?: unknown }).status;
    const objStatus = (obj as { status?: unknown }).status;
    const merged = status
      ? { ...structuredClone(cur), status: structuredClone(objStatus) }
      : { ...structuredClone(obj), status: structuredClone(curStatus) };
    const stored = this.stamp(merged as T);
    store.set(key, stored);
    this.writes.push({ op, name: key });
    const hook = this.hooks.find((h) => h.op === op && h.name === key);
    if (hook) {
      this.hooks = this.hooks.filter((h) => h !== hook);
      hook.f();
    }
    return deepFreeze(structuredClone(stored));
  }

  private newContext(): SyncContext {
    const cache = newPvControllerCache();
    for (const v of this.volumes.values()) cache.storeVolume(deepFreeze(structuredClone(v)));
    for (const c of this.claims.values()) cache.storeClaim(deepFreeze(structuredClone(c)));
    const informerOnly = new Map((this.init.informerOnlyClaims ?? []).map((c) => [claimKey(c), c]));
    const listers: Listers = {
      claim: (ns, name) => cache.getClaim(`${ns}/${name}`) ?? informerOnly.get(`${ns}/${name}`),
      storageClass: (name) => (this.init.classes ?? []).find((s) => s.metadata?.name === name),
      storageClasses: () => this.init.classes ?? [],
      node: (name) => (this.init.nodes ?? []).find((n) => n.metadata?.name === name),
      podsForClaim: (ns, name) =>
        (this.init.pods ?? []).filter(
          (p) =>
            p.metadata?.namespace === ns &&
            (p.spec?.volumes ?? []).some((v) => v.persistentVolumeClaim?.claimName === name),
        ),
      // An informer that is caught up with the server.
      volumesPreboundTo: (ns, name) =>
        [...this.volumes.values()]
          .filter((v) => v.spec?.claimRef?.namespace === ns && v.spec.claimRef.name === name)
          .map((v) => deepFreeze(structuredClone(v))),
    };
    const fx: Effects = {
      updateVolume: async (v) => this.write(this.volumes, v.metadata?.name ?? '', 'updateVolume', v, false),
      updateVolumeStatus: async (v) => this.write(this.volumes, v.metadata?.name ?? '', 'updateVolumeStatus', v, true),
      deleteVolume: async (name) => {
        this.gate('deleteVolume', name);
        if (!this.volumes.delete(name)) throw new NotFoundError(`"${name}" not found`);
        this.writes.push({ op: 'deleteVolume', name });
      },
      updateClaim: async (c) => this.write(this.claims, claimKey(c), 'updateClaim', c, false),
      updateClaimStatus: async (c) => this.write(this.claims, claimKey(c), 'updateClaimStatus', c, true),
      liveVolume: async (name) => {
        const v = this.volumes.get(name);
        if (!v) throw new NotFoundError(`persistentvolumes "${name}" not found`);
        return deepFreeze(structuredClone(v));
      },
      liveClaim: async (ns, name) => {
        const c = this.claims.get(`${ns}/${name}`);
        if (!c) throw new NotFoundError(`persistentvolumeclaims "${name}" not found`);
        return deepFreeze(structuredClone(c));
      },
      event: (e) => {
        this.events.push(e);
      },
      enqueueClaim: (key, afterMs) => {
        this.enqueued.push(key);
        if (afterMs) this.enqueuedAfterMs.set(key, afterMs);
      },
      scheduleOperation: (name, op) => {
        if (!this.operations.some((o) => o.name === name)) this.operations.push({ name, op });
      },
      removeHostPathData: async (path) => {
        this.removedPaths.push(path);
      },
    };
    if (this.recycler) fx.recycle = this.recycler;
    return { cache, listers, fx, options: { ...DEFAULT_OPTIONS, ...(this.init.options ?? {}) } };
  }

  /** Events as compact tuples for assertions. */
  eventTuples(): Array<[string, string, string, string]> {
    return this.events.map((e) => [e.object.name ?? '', e.type, e.reason, e.message]);
  }
}

export const NS = 'ns';

export interface PvOpts {
  modes?: string[];
  cls?: string;
  phase?: 'Pending' | 'Available' | 'Bound' | 'Released' | 'Failed';
  claim?: { name: string; uid?: string; namespace?: string };
  policy?: string;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  volumeMode?: string;
  hostPath?: string;
  source?: Partial<NonNullable<PersistentVolume['spec']>>;
  uid?: string;
}

export function pv(name: string, capacity: string, o: PvOpts = {}): PersistentVolume {
  const spec: NonNullable<PersistentVolume['spec']> = {
    capacity: { storage: capacity },
    accessModes: o.modes ?? ['ReadWriteOnce'],
    persistentVolumeReclaimPolicy: o.policy ?? 'Retain',
    storageClassName: o.cls ?? '',
    ...(o.source ?? { hostPath: { path: o.hostPath ?? `/data/${name}` } }),
  };
  if (o.volumeMode) spec.volumeMode = o.volumeMode;
  if (o.claim) {
    spec.claimRef = {
      kind: 'PersistentVolumeClaim',
      namespace: o.claim.namespace ?? NS,
      name: o.claim.name,
      apiVersion: 'v1',
    };
    if (o.claim.uid) spec.claimRef.uid = o.claim.uid;
  }
  const v: PersistentVolume = {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, uid: o.uid ?? `pvuid-${name}` },
    spec,
    status: { phase: o.phase ?? 'Available' },
  };
  if (o.annotations && v.metadata) v.metadata.annotations = { ...o.annotations };
  if (o.labels && v.metadata) v.metadata.labels = { ...o.labels };
  return v;
}

export interface PvcOpts {
  uid?: string;
  modes?: string[];
  cls?: string | null;
  volumeName?: string;
  phase?: 'Pending' | 'Bound' | 'Lost';
  annotations?: Record<string, string>;
  selector?: NonNullable<PersistentVolumeClaim['spec']>['selector'];
  volumeMode?: string;
}

export function pvc(name: string, request: string, o: PvcOpts = {}): PersistentVolumeClaim {
  const spec: NonNullable<PersistentVolumeClaim['spec']> = {
    accessModes: o.modes ?? ['ReadWriteOnce'],
    resources: { requests: { storage: request } },
  };
  if (o.cls !== null) spec.storageClassName = o.cls ?? '';
  if (o.volumeName) spec.volumeName = o.volumeName;
  if (o.selector) spec.selector = o.selector;
  if (o.volumeMode) spec.volumeMode = o.volumeMode;
  const c: PersistentVolumeClaim = {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: NS, uid: o.uid ?? `uid-${name}` },
    spec,
    status: { phase: o.phase ?? 'Pending' },
  };
  if (o.annotations && c.metadata) c.metadata.annotations = { ...o.annotations };
  return c;
}

export function storageClass(
  name: string,
  provisioner: string,
  mode: 'Immediate' | 'WaitForFirstConsumer' = 'Immediate',
  annotations?: Record<string, string>,
): StorageClass {
  const s: StorageClass = {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name },
    provisioner,
    volumeBindingMode: mode,
    reclaimPolicy: 'Delete',
  };
  if (annotations && s.metadata) s.metadata.annotations = annotations;
  return s;
}
