/**
 * The owner graph (upstream's GraphBuilder, over informer caches): one informer per deletable
 * resource, each indexed by the uids its objects' ownerReferences name, plus a uid → object map.
 * Edges are owner uid → dependents; an owner that was never observed is simply a uid with
 * dependents and no object (upstream's virtual node), checked against the API before anything is
 * deleted because of it.
 */
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import type { Informer } from '../../client/informer.js';
import type { KubeObjectLike } from '../../client/rest.js';
import type { ApiResource } from './discovery.js';

export const OWNER_UID_INDEX = 'gc-owner-uid';

export function ownerUids(o: KubeObjectLike): string[] {
  return (o.metadata?.ownerReferences ?? []).map((r) => r.uid);
}

/** One object of the graph: where it is served, and its cached state (never mutate it). */
export interface GraphItem {
  readonly key: string;
  readonly resource: ApiResource;
  readonly obj: KubeObjectLike;
}

/** The work-queue key of an object: `<group>/<plural>/<namespace>/<name>` (group and namespace may be empty). */
export function itemKey(r: ApiResource, namespace: string | undefined, name: string): string {
  return `${r.group}/${r.plural}/${r.namespaced ? (namespace ?? '') : ''}/${name}`;
}

export function resourceId(r: Pick<ApiResource, 'group' | 'plural'>): string {
  return `${r.group}/${r.plural}`;
}

/** The group of an ownerReference's apiVersion (`v1` → core ''). */
export function groupOf(apiVersion: string): string {
  const i = apiVersion.indexOf('/');
  return i < 0 ? '' : apiVersion.slice(0, i);
}

export class OwnerGraph {
  private readonly byResource = new Map<string, { resource: ApiResource; informer: Informer<KubeObjectLike> }>();
  private readonly byGroupKind = new Map<string, ApiResource>();
  private readonly uids = new Map<string, string>();

  constructor(entries: ReadonlyArray<{ resource: ApiResource; informer: Informer<KubeObjectLike> }>) {
    for (const e of entries) this.add(e);
  }

  /** Follows one more resource (a kind discovery found later, e.g. a CustomResourceDefinition's). */
  add(e: { resource: ApiResource; informer: Informer<KubeObjectLike> }): void {
    e.informer.addIndexer(OWNER_UID_INDEX, ownerUids);
    this.byResource.set(resourceId(e.resource), e);
    this.byGroupKind.set(`${e.resource.group}/${e.resource.kind}`, e.resource);
  }

  /** Stops following a resource the server no longer serves. */
  remove(resource: ApiResource): void {
    this.byResource.delete(resourceId(resource));
    const gk = `${resource.group}/${resource.kind}`;
    if (this.byGroupKind.get(gk) === resource) this.byGroupKind.delete(gk);
  }

  /** Whether a resource is followed. */
  has(resource: ApiResource): boolean {
    return this.byResource.has(resourceId(resource));
  }

  entries(): Array<{ resource: ApiResource; informer: Informer<KubeObjectLike> }> {
    return [...this.byResource.values()];
  }

  /** The resource serving an ownerReference's kind (any version of its group), if the server has it. */
  resourceFor(ref: Pick<OwnerReference, 'apiVersion' | 'kind'>): ApiResource | undefined {
    return this.byGroupKind.get(`${groupOf(ref.apiVersion)}/${ref.kind}`);
  }

  get(resource: ApiResource, namespace: string | undefined, name: string): KubeObjectLike | undefined {
    const lister = this.byResource.get(resourceId(resource))?.informer.lister;
    if (!lister) return undefined;
    return resource.namespaced ? lister.get(namespace ?? '', name) : lister.get(name);
  }

  /** The object of a work-queue key. */
  getByKey(key: string): GraphItem | undefined {
    const [group, plural, namespace, name] = key.split('/');
    const e = this.byResource.get(`${group}/${plural}`);
    if (!e || name === undefined) return undefined;
    const obj = this.get(e.resource, namespace, name);
    return obj ? { key, resource: e.resource, obj } : undefined;
  }

  /** Records where the object of `uid` is (called from the informers' handlers). */
  observe(resource: ApiResource, obj: KubeObjectLike): string {
    const key = itemKey(resource, obj.metadata?.namespace, obj.metadata?.name ?? '');
    const uid = obj.metadata?.uid;
    if (uid) this.uids.set(uid, key);
    return key;
  }

  forget(obj: KubeObjectLike): void {
    const uid = obj.metadata?.uid;
    if (uid) this.uids.delete(uid);
  }

  /** The work-queue key of the observed object with this uid. */
  keyOfUid(uid: string): string | undefined {
    return this.uids.get(uid);
  }

  /** Every cached object with an ownerReference to `uid`. */
  dependentsOf(uid: string): GraphItem[] {
    const out: GraphItem[] = [];
    for (const { resource, informer } of this.byResource.values()) {
      for (const obj of informer.byIndex(OWNER_UID_INDEX, uid)) {
        out.push({ key: itemKey(resource, obj.metadata?.namespace, obj.metadata?.name ?? ''), resource, obj });
      }
    }
    return out;
  }
}
