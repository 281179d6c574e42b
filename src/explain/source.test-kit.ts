/** An in-memory ExplainSource for the explanations' unit tests. */
import type { CsiCall } from '../csi/tracehub.js';
import { newExplainSource, SOURCE_KINDS, type ExplainSource, type SourceKind } from './source.js';

export type World = Partial<Record<SourceKind, unknown[]>> & { csiCalls?: CsiCall[] };

interface Meta {
  metadata?: { name?: string; namespace?: string };
}

export function memorySource(w: World): ExplainSource {
  const kindOf = (group: string, plural: string): SourceKind | undefined =>
    (Object.keys(SOURCE_KINDS) as SourceKind[]).find(
      (k) => SOURCE_KINDS[k].group === group && SOURCE_KINDS[k].plural === plural,
    );
  const objs = (group: string, plural: string, ns?: string): Meta[] => {
    const k = kindOf(group, plural);
    const all = (k ? (w[k] ?? []) : []) as Meta[];
    return ns === undefined ? all : all.filter((o) => (o.metadata?.namespace ?? '') === ns);
  };
  return newExplainSource(
    {
      get: (g, p, ns, name) => objs(g, p, ns).find((o) => o.metadata?.name === name),
      list: (g, p, ns) => objs(g, p, ns),
    },
    (volumeId) => (w.csiCalls ?? []).filter((c) => c.volumeId === volumeId),
  );
}
