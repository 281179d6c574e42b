/**
 * Serves what CustomResourceDefinitions define, inside the API server (apiextensions-apiserver's
 * naming, establishing and finalizer controllers and its per-CRD handler set):
 * - keeps each CRD's status (accepted names, NamesAccepted, Established) — `naming.ts` decides;
 * - registers one storage per served version of an established CRD with the registry, so the
 *   same handlers, watch cache, field manager and authorizers serve its objects;
 * - on deletion (the cleanup finalizer), deletes every custom resource, then drops the finalizer;
 *   once the CRD is gone its kind is no longer served.
 * Level-triggered: every CRD event queues its name; a sync compares desired with actual and acts
 * through an executor (one operation per CRD, exponential backoff on failure).
 */
import { metaTime } from '../../util/metatime.js';
import { newOperationExecutor, type OperationExecutor } from '../../util/executor.js';
import { newLogger } from '../../util/log.js';
import { setDynamicDefinitions } from '../openapi/schemas.js';
import type { ApiRegistry, ResourceStorage } from '../registry.js';
import { jsonEqual } from '../../util/jsonequal.js';
import { ApiNotFoundError } from '../status.js';
import type { CacheEvent, CacheWatch } from '../watchcache.js';
import { crDefinitions } from './crschema.js';
import { customResourceDef } from './crresource.js';
import { compareVersions, desiredStatus } from './naming.js';
import { CLEANUP_FINALIZER, CRD_GROUP, isEstablished, type CRD } from './types.js';

const log = newLogger('api/apiextensions');
/** How often a registrar whose CRD cache is relisting looks whether it is back. */
const RELIST_POLL_MS = 100;

/** The custom resources a CRD currently serves, and what they were built from. */
interface Served {
  readonly fingerprint: string;
  readonly storages: ResourceStorage[];
}

export interface CrdRegistrar {
  /** Serves every established CRD (awaited before the server answers), then follows changes. */
  start(): Promise<void>;
  /** Resolves when no operation is pending (tests). */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/** What makes the served storages of a CRD differ: a change re-registers them. */
function fingerprint(crd: CRD): string {
  return JSON.stringify({ uid: crd.metadata.uid, spec: crd.spec, names: crd.status?.acceptedNames });
}

/** The built-in kinds of a group, as CRDs holding their names: a CRD may not take them over. */
function builtInNames(registry: ApiRegistry, group: string): CRD[] {
  return registry
    .defs()
    .filter((d) => d.group === group && !d.custom)
    .map((d) => ({
      metadata: { name: `${d.plural}.${group}` },
      spec: { group, scope: 'Cluster', names: { plural: d.plural, kind: d.kind }, versions: [] },
      status: {
        acceptedNames: {
          plural: d.plural,
          singular: d.singular,
          kind: d.kind,
          listKind: d.listKind,
          shortNames: [...d.shortNames],
        },
      },
    }));
}

export function newCrdRegistrar(registry: ApiRegistry): CrdRegistrar {
  const crds = registry.byGroupVersionPlural(CRD_GROUP, 'v1', 'customresourcedefinitions');
  const served = new Map<string, Served>();
  const exec: OperationExecutor = newOperationExecutor({ log });
  let watch: CacheWatch | undefined;
  let stopped = false;

  const current = (name: string): CRD | undefined => crds?.get(undefined, name)?.obj as CRD | undefined;
  const sameGroup = (crd: CRD): CRD[] => [
    ...(crds?.cache.list() ?? [])
      .map((c) => c.obj as CRD)
      .filter((o) => o.spec.group === crd.spec.group && o.metadata.name !== crd.metadata.name),
    ...builtInNames(registry, crd.spec.group),
  ];

  async function serve(crd: CRD): Promise<void> {
    const name = crd.metadata.name ?? '';
    const fp = fingerprint(crd);
    unserve(name);
    const versions = crd.spec.versions.filter((v) => v.served).sort((a, b) => compareVersions(a.name, b.name));
    const terminating = (): boolean => current(name)?.metadata.deletionTimestamp !== undefined;
    const defs = versions.map((v) => customResourceDef(crd, v, terminating));
    const definitions = Object.assign(
      {},
      ...defs.map((d) => crDefinitions(d.schema, { group: d.group, version: d.version, kind: d.kind }, d.listKind)),
    );
    setDynamicDefinitions(`crd/${name}`, definitions);
    const storages: ResourceStorage[] = [];
    for (const d of defs) storages.push(await registry.register(d));
    served.set(name, { fingerprint: fp, storages });
    log.info('serving custom resources', { crd: name, versions: versions.map((v) => v.name).join(',') });
  }

  function unserve(name: string): void {
    const s = served.get(name);
    if (!s) return;
    served.delete(name);
    for (const st of s.storages) registry.unregister(st);
    setDynamicDefinitions(`crd/${name}`, undefined);
  }

  /** Deletes every object of the CRD; true once none is left. */
  async function cleanup(crd: CRD): Promise<boolean> {
    const st = served.get(crd.metadata.name ?? '')?.storages[0];
    if (!st) return true;
    const objs = st.cache.list().map((c) => c.obj);
    for (const o of objs) {
      if (o.metadata.deletionTimestamp) continue;
      await st.delete(o.metadata.namespace, o.metadata.name ?? '').catch((e: unknown) => {
        if (!(e instanceof ApiNotFoundError)) throw e;
      });
    }
    return st.cache.list().length === 0;
  }

  /** Drops the cleanup finalizer; a CRD already gone (a second pass on a stale cache) is done. */
  async function removeFinalizer(name: string): Promise<void> {
    await crds!
      .update(undefined, name, (cur) => {
        const next = structuredClone(cur);
        next.metadata.finalizers = (cur.metadata.finalizers ?? []).filter((f) => f !== CLEANUP_FINALIZER);
        return next;
      })
      .catch((e: unknown) => {
        if (!(e instanceof ApiNotFoundError)) throw e;
      });
  }

  /** One pass for one CRD: decide from its current state, act through the executor. */
  function sync(name: string): void {
    if (stopped) return;
    const crd = current(name);
    if (!crd) {
      unserve(name);
      return;
    }
    if (crd.metadata.deletionTimestamp) {
      if (!crd.metadata.finalizers?.includes(CLEANUP_FINALIZER)) return;
      exec.run(name, 'cleanup', async () => {
        if (!(await cleanup(crd))) throw new Error(`custom resources of ${name} are still being deleted`);
        unserve(name);
        await removeFinalizer(name);
      });
      return;
    }
    const want = desiredStatus(crd, sameGroup(crd), metaTime());
    if (!jsonEqual(want, crd.status ?? {})) {
      exec.run(name, 'status', async () => {
        await crds!.update(undefined, name, (cur) => ({ ...structuredClone(cur), status: want }), {
          subresource: 'status',
        });
      });
      return;
    }
    // Only when something changed: a settled operation re-syncs its key, so a no-op run would loop.
    if (isEstablished(crd) && served.get(name)?.fingerprint !== fingerprint(crd))
      exec.run(name, 'serve', () => serve(crd));
  }

  /** Every CRD event queues its name; a relisted cache (the store's watch lost) restarts the watch and resyncs all. */
  function follow(): void {
    if (!crds || stopped) return;
    const onEvent = (ev: CacheEvent): void => {
      const name = ev.cur.obj.metadata.name ?? '';
      sync(name);
      // A CRD's names changing may free (or take) names another CRD of its group waits for.
      const group = (ev.cur.obj as CRD).spec?.group;
      for (const o of crds.cache.list()) {
        const other = o.obj as CRD;
        if (other.spec.group === group && other.metadata.name !== name && !isEstablished(other))
          sync(other.metadata.name ?? '');
      }
    };
    const restart = (): void => {
      if (stopped) return;
      if (!crds.cache.isSynced()) {
        setTimeout(restart, RELIST_POLL_MS).unref();
        return;
      }
      follow();
      for (const c of crds.cache.list()) sync(c.obj.metadata.name ?? '');
    };
    watch = crds.cache.watch(crds.cache.revision(), onEvent, restart);
  }

  return {
    async start() {
      if (!crds) return;
      // A restart serves every established CRD before the server answers.
      for (const c of crds.cache.list()) {
        const crd = c.obj as CRD;
        if (isEstablished(crd) && !crd.metadata.deletionTimestamp) await serve(crd);
      }
      exec.onChange((ch) => {
        if (typeof ch.key === 'string') sync(ch.key);
      });
      follow();
      for (const c of crds.cache.list()) sync(c.obj.metadata.name ?? '');
    },
    idle: () => exec.idle(),
    async stop() {
      stopped = true;
      watch?.close();
      await exec.close();
    },
  };
}
