import type { ApiRegistry } from '../../api/registry.js';
import { keyPrefix } from '../../api/registry.js';
import { HttpError } from '../../api/status.js';
import { newLogger } from '../../util/log.js';

const log = newLogger('namespace-controller');
const RETRY_MS = 500;

/**
 * The namespace lifecycle controller (kube-controller-manager's "namespace" controller): once a
 * Namespace has a deletionTimestamp, delete every object in it; when none is left, drop the
 * `kubernetes` entry of spec.finalizers (the finalize subresource), which lets the namespace go.
 * It runs inside the API server process, on the registry directly.
 */
export function startNamespaceController(registry: ApiRegistry): { stop(): void } {
  const ns = registry.kind('Namespace');
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let stopped = false;

  const schedule = (ms: number): void => {
    if (stopped || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void pass();
    }, ms);
    timer.unref();
  };

  async function pass(): Promise<void> {
    if (running) return schedule(RETRY_MS);
    running = true;
    try {
      for (const name of [...pending]) {
        const cur = ns.get(undefined, name);
        if (!cur || !cur.obj.metadata.deletionTimestamp) {
          pending.delete(name);
          continue;
        }
        const left = await deleteContent(registry, name);
        if (left > 0) continue;
        try {
          await ns.update(undefined, name, (cur) => {
            const o = structuredClone(cur);
            const spec = (o.spec ?? {}) as { finalizers?: string[] };
            o.spec = { ...spec, finalizers: (spec.finalizers ?? []).filter((f) => f !== 'kubernetes') };
            return o;
          }, { subresource: 'finalize' });
          pending.delete(name);
        } catch (e) {
          if (e instanceof HttpError && e.httpStatus === 404) pending.delete(name);
          else log.warn('finalize failed', { namespace: name, error: (e as Error).message });
        }
      }
    } finally {
      running = false;
    }
    if (pending.size) schedule(RETRY_MS);
  }

  for (const c of ns.cache.list()) if (c.obj.metadata.deletionTimestamp) pending.add(c.obj.metadata.name!);
  const w = ns.cache.watch(ns.cache.revision(), (ev) => {
    if (ev.type !== 'DELETED' && ev.cur.obj.metadata.deletionTimestamp) {
      pending.add(ev.cur.obj.metadata.name!);
      schedule(0);
    }
  });
  if (pending.size) schedule(0);
  return {
    stop: () => {
      stopped = true;
      w.close();
      if (timer) clearTimeout(timer);
    },
  };
}

/** Deletes all objects in a namespace; returns how many still exist (e.g. held by finalizers). */
async function deleteContent(registry: ApiRegistry, namespace: string): Promise<number> {
  let left = 0;
  for (const s of registry.all()) {
    if (!s.def.namespaced) continue;
    for (const c of s.cache.list(keyPrefix(s.def, namespace))) {
      left++;
      if (c.obj.metadata.deletionTimestamp) continue;
      try {
        await s.delete(namespace, c.obj.metadata.name!, {});
      } catch (e) {
        if (!(e instanceof HttpError && e.httpStatus === 404)) log.warn('delete failed', { namespace, name: c.obj.metadata.name, error: (e as Error).message });
      }
    }
  }
  // Count again: immediate deletions are gone now.
  let remaining = 0;
  for (const s of registry.all()) if (s.def.namespaced) remaining += s.cache.list(keyPrefix(s.def, namespace)).length;
  return Math.min(left, remaining);
}
