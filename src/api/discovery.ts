import { GIT_COMMIT, KUBE_VERSION, PLATFORM } from '../kube/version.js';
import { SCALE_KIND } from './resources/scale.js';
import type { GroupVersionKind, ResourceDef, SubresourceDef } from './resources/types.js';

export function versionInfo(): Record<string, string> {
  return {
    major: KUBE_VERSION.major,
    minor: KUBE_VERSION.minor,
    gitVersion: KUBE_VERSION.gitVersion,
    gitCommit: GIT_COMMIT,
    gitTreeState: 'clean',
    buildDate: '2026-11-01T00:00:00Z',
    goVersion: 'go1.22.0',
    compiler: 'gc',
    platform: PLATFORM,
  };
}

const SUBRESOURCE_VERBS = ['get', 'patch', 'update'];

/** What a subresource beyond /status takes and answers with, and how it is called. */
function extraSubresource(d: ResourceDef, s: SubresourceDef): { kind: GroupVersionKind; verbs: string[] } {
  if (s.type === 'action' || s.type === 'eviction') return { kind: s.bodyKind, verbs: ['create'] };
  if (s.type === 'scale') return { kind: SCALE_KIND, verbs: SUBRESOURCE_VERBS };
  if (s.type === 'stream') return { kind: s.kind, verbs: [...s.verbs] };
  return { kind: { group: d.group, version: d.version, kind: d.kind }, verbs: ['update'] };
}

function groups(defs: readonly ResourceDef[]): Map<string, Map<string, ResourceDef[]>> {
  const out = new Map<string, Map<string, ResourceDef[]>>();
  for (const d of defs) {
    let g = out.get(d.group);
    if (!g) out.set(d.group, (g = new Map()));
    let v = g.get(d.version);
    if (!v) g.set(d.version, (v = []));
    v.push(d);
  }
  return out;
}

function gv(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

/** Legacy `APIResourceList` of one group-version (GET /api/v1, GET /apis/<g>/<v>). */
export function apiResourceList(defs: readonly ResourceDef[], group: string, version: string): object | undefined {
  const list = defs.filter((d) => d.group === group && d.version === version);
  if (!list.length) return undefined;
  const resources: object[] = [];
  for (const d of list) {
    resources.push({
      name: d.plural,
      singularName: d.singular,
      namespaced: d.namespaced,
      kind: d.kind,
      verbs: [...d.verbs],
      ...(d.shortNames.length ? { shortNames: [...d.shortNames] } : {}),
      ...(d.categories.length ? { categories: [...d.categories] } : {}),
      storageVersionHash: hash8(`${d.group}/${d.version}/${d.kind}`),
    });
    if (d.hasStatus)
      resources.push({
        name: `${d.plural}/status`,
        singularName: '',
        namespaced: d.namespaced,
        kind: d.kind,
        verbs: SUBRESOURCE_VERBS,
      });
    for (const sub of d.subresources ?? []) {
      const { kind, verbs } = extraSubresource(d, sub);
      // A subresource whose kind is of another group-version names it (pods/eviction: policy/v1), as kubectl drain looks for.
      const other =
        kind.group !== d.group || kind.version !== d.version ? { group: kind.group, version: kind.version } : {};
      resources.push({
        name: `${d.plural}/${sub.name}`,
        singularName: '',
        namespaced: d.namespaced,
        ...other,
        kind: kind.kind,
        verbs,
      });
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: gv(group, version), resources };
}

function hash8(s: string): string {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return Buffer.from(String(h >>> 0))
    .toString('base64')
    .slice(0, 11);
}

/** GET /api (legacy). */
export function apiVersions(): object {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '' }],
  };
}

function apiGroup(group: string, versions: readonly string[]): object {
  return {
    name: group,
    versions: versions.map((v) => ({ groupVersion: `${group}/${v}`, version: v })),
    preferredVersion: { groupVersion: `${group}/${versions[0]}`, version: versions[0] },
  };
}

/** GET /apis (legacy APIGroupList). */
export function apiGroupList(defs: readonly ResourceDef[]): object {
  const out: object[] = [];
  for (const [g, vs] of groups(defs)) if (g) out.push(apiGroup(g, [...vs.keys()]));
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: out };
}

/** GET /apis/<group>. */
export function apiGroupObject(defs: readonly ResourceDef[], group: string): object | undefined {
  const vs = groups(defs).get(group);
  if (!group || !vs) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(group, [...vs.keys()]) };
}

/**
 * Aggregated discovery (`apidiscovery.k8s.io` v2 and v2beta1): GET /api answers the core group,
 * GET /apis every named group, each with all resources, in one document.
 */
export function aggregatedDiscovery(defs: readonly ResourceDef[], core: boolean, apiVersion: 'v2' | 'v2beta1'): object {
  const items: object[] = [];
  for (const [g, vs] of groups(defs)) {
    if ((g === '') !== core) continue;
    items.push({
      metadata: { name: g, creationTimestamp: null },
      versions: [...vs].map(([v, list]) => ({
        version: v,
        resources: list.map((d) => {
          const subresources: object[] = [];
          if (d.hasStatus)
            subresources.push({
              subresource: 'status',
              responseKind: { group: d.group, version: d.version, kind: d.kind },
              verbs: SUBRESOURCE_VERBS,
            });
          for (const sub of d.subresources ?? []) {
            const { kind, verbs } = extraSubresource(d, sub);
            subresources.push({ subresource: sub.name, responseKind: { ...kind }, verbs });
          }
          return {
            resource: d.plural,
            responseKind: { group: d.group, version: d.version, kind: d.kind },
            scope: d.namespaced ? 'Namespaced' : 'Cluster',
            singularResource: d.singular,
            verbs: [...d.verbs],
            ...(d.shortNames.length ? { shortNames: [...d.shortNames] } : {}),
            ...(d.categories.length ? { categories: [...d.categories] } : {}),
            ...(subresources.length ? { subresources } : {}),
          };
        }),
        freshness: 'Current',
      })),
    });
  }
  return { kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${apiVersion}`, metadata: {}, items };
}
