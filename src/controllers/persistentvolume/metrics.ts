/**
 * The PV controller's collector gauges under Kubernetes' names (pkg/controller/volume/
 * persistentvolume/metrics): counts computed from the cache at scrape time, rendered in the
 * Prometheus text format. A pure function of the objects; the HTTP /metrics endpoint concatenates it.
 */
import type { PersistentVolume, PersistentVolumeClaim } from './types.js';

/** GetFullQualifiedPluginNameForVolume for the sources Stowage knows; "N/A" otherwise. */
export function volumePluginName(pv: PersistentVolume): string {
  const s = pv.spec ?? {};
  if (s.csi) return `kubernetes.io/csi:${s.csi.driver}`;
  if (s.hostPath) return 'kubernetes.io/host-path';
  if (s.nfs) return 'kubernetes.io/nfs';
  if (s.local) return 'kubernetes.io/local-volume';
  return 'N/A';
}

const esc = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

function family(name: string, help: string, counts: Map<string, number>, labelNames: readonly string[]): string {
  const lines = [`# HELP ${name} [ALPHA] ${help}`, `# TYPE ${name} gauge`];
  for (const [key, n] of [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const values = key.split(LABEL_SEP);
    const labels = labelNames.map((l, i) => `${l}="${esc(values[i] ?? '')}"`).join(',');
    lines.push(`${name}{${labels}} ${n}`);
  }
  return lines.join('\n') + '\n';
}

// Label values never contain NUL: it separates them in the counting key.
const LABEL_SEP = '\u0000';

function bump(m: Map<string, number>, labels: readonly string[]): void {
  const k = labels.join(LABEL_SEP);
  m.set(k, (m.get(k) ?? 0) + 1);
}

/** pv_collector_{total_pv,bound_pv,unbound_pv,bound_pvc,unbound_pvc}_count. */
export function renderCollectorMetrics(
  volumes: Iterable<PersistentVolume>,
  claims: Iterable<PersistentVolumeClaim>,
): string {
  const total = new Map<string, number>();
  const boundPv = new Map<string, number>();
  const unboundPv = new Map<string, number>();
  for (const v of volumes) {
    bump(total, [volumePluginName(v), v.spec?.volumeMode ?? 'Filesystem']);
    bump(v.status?.phase === 'Bound' ? boundPv : unboundPv, [v.spec?.storageClassName ?? '']);
  }
  const boundPvc = new Map<string, number>();
  const unboundPvc = new Map<string, number>();
  for (const c of claims) {
    const dims = [c.metadata?.namespace ?? '', c.spec?.storageClassName ?? '', c.spec?.volumeAttributesClassName ?? ''];
    bump(c.status?.phase === 'Bound' ? boundPvc : unboundPvc, dims);
  }
  const pvcLabels = ['namespace', 'storage_class', 'volume_attributes_class'];
  return [
    family('pv_collector_total_pv_count', 'Gauge measuring total number of persistent volumes', total, [
      'plugin_name',
      'volume_mode',
    ]),
    family('pv_collector_bound_pv_count', 'Gauge measuring number of persistent volume currently bound', boundPv, [
      'storage_class',
    ]),
    family(
      'pv_collector_unbound_pv_count',
      'Gauge measuring number of persistent volume currently unbound',
      unboundPv,
      ['storage_class'],
    ),
    family(
      'pv_collector_bound_pvc_count',
      'Gauge measuring number of persistent volume claim currently bound',
      boundPvc,
      pvcLabels,
    ),
    family(
      'pv_collector_unbound_pvc_count',
      'Gauge measuring number of persistent volume claim currently unbound',
      unboundPvc,
      pvcLabels,
    ),
  ].join('');
}
