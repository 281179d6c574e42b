import { describe, expect, it } from 'vitest';
import { renderCollectorMetrics } from './metrics.js';
import { pv, pvc } from './fixtures.test-kit.js';

describe('collector metrics', () => {
  it('counts volumes and claims by Kubernetes labels', () => {
    const text = renderCollectorMetrics(
      [
        pv('a', '1Gi', { phase: 'Bound', cls: 'gold' }),
        pv('b', '1Gi', { cls: 'gold' }),
        pv('c', '1Gi', { source: { csi: { driver: 'd.io', volumeHandle: 'h' } }, volumeMode: 'Block' }),
      ],
      [pvc('x', '1Gi', { phase: 'Bound', cls: 'gold' }), pvc('y', '1Gi')],
    );
    expect(text).toContain(
      'pv_collector_total_pv_count{plugin_name="kubernetes.io/host-path",volume_mode="Filesystem"} 2\n',
    );
    expect(text).toContain('pv_collector_total_pv_count{plugin_name="kubernetes.io/csi:d.io",volume_mode="Block"} 1\n');
    expect(text).toContain('pv_collector_bound_pv_count{storage_class="gold"} 1\n');
    expect(text).toContain('pv_collector_unbound_pv_count{storage_class="gold"} 1\n');
    expect(text).toContain('pv_collector_unbound_pv_count{storage_class=""} 1\n');
    expect(text).toContain(
      'pv_collector_bound_pvc_count{namespace="ns",storage_class="gold",volume_attributes_class=""} 1\n',
    );
    expect(text).toContain(
      'pv_collector_unbound_pvc_count{namespace="ns",storage_class="",volume_attributes_class=""} 1\n',
    );
    expect(text).toContain('# TYPE pv_collector_bound_pvc_count gauge\n');
  });
});
