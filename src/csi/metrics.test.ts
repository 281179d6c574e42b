import { describe, expect, it } from 'vitest';
import { MetricsRegistry } from '../util/metrics.js';
import { goStatusName, recordKubeletOperations, recordSidecarOperations } from './metrics.js';
import type { CsiCallInput } from './tracehub.js';

function source(): { emit: (t: Partial<CsiCallInput>) => void; onCall: (l: (t: CsiCallInput) => void) => () => void } {
  const ls = new Set<(t: CsiCallInput) => void>();
  return {
    emit: (t) =>
      ls.forEach((l) =>
        l({
          method: '/csi.v1.Controller/CreateVolume',
          startMs: 0,
          durationMs: 20_000,
          code: 'OK',
          driver: 'd.csi',
          caller: 'x',
          request: {},
          ...t,
        }),
      ),
    onCall: (l) => (ls.add(l), () => ls.delete(l)),
  };
}

describe('CSI operation metrics', () => {
  it.each([
    ['OK', 'OK'],
    ['CANCELLED', 'Canceled'],
    ['DEADLINE_EXCEEDED', 'DeadlineExceeded'],
    ['INVALID_ARGUMENT', 'InvalidArgument'],
    ['RESOURCE_EXHAUSTED', 'ResourceExhausted'],
    ['UNAVAILABLE', 'Unavailable'],
  ])('%s is %s as Go prints it', (ours, go) => expect(goStatusName(ours)).toBe(go));

  it("the sidecar's csi_sidecar_operations_seconds, labelled as csi-lib-utils labels it", () => {
    const m = new MetricsRegistry();
    const s = source();
    const stop = recordSidecarOperations(s, m);
    s.emit({});
    s.emit({ code: 'INVALID_ARGUMENT', durationMs: 50 });
    stop();
    s.emit({});
    const text = m.render();
    expect(text).toContain('# TYPE csi_sidecar_operations_seconds histogram');
    expect(text).toContain(
      'csi_sidecar_operations_seconds_bucket{driver_name="d.csi",method_name="/csi.v1.Controller/CreateVolume",grpc_status_code="OK",le="25"} 1',
    );
    expect(text).toContain(
      'csi_sidecar_operations_seconds_bucket{driver_name="d.csi",method_name="/csi.v1.Controller/CreateVolume",grpc_status_code="OK",le="15"} 0',
    );
    expect(text).toContain(
      'csi_sidecar_operations_seconds_count{driver_name="d.csi",method_name="/csi.v1.Controller/CreateVolume",grpc_status_code="InvalidArgument"} 1',
    );
    expect(text).not.toContain('le="0.005"');
  });

  it("the kubelet's csi_operations_seconds with migrated=false", () => {
    const m = new MetricsRegistry();
    const s = source();
    recordKubeletOperations(s, m);
    s.emit({ method: '/csi.v1.Node/NodePublishVolume', durationMs: 100 });
    expect(m.render()).toContain(
      'csi_operations_seconds_count{driver_name="d.csi",method_name="/csi.v1.Node/NodePublishVolume",grpc_status_code="OK",migrated="false"} 1',
    );
  });
});
