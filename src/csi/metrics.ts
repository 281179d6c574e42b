/**
 * CSI call latency histograms under the names Kubernetes uses: the sidecars'
 * `csi_sidecar_operations_seconds` (csi-lib-utils) and the kubelet's `csi_operations_seconds`.
 * Both label the full gRPC method and the status code as Go's grpc prints it (`DeadlineExceeded`).
 */
import type { MetricsRegistry } from '../util/metrics.js';
import type { CsiCallInput } from './tracehub.js';

/** The buckets both components use, in seconds. */
export const CSI_OPERATION_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 25, 50, 120, 300, 600] as const;

const HELP = 'Container Storage Interface operation duration with gRPC error code status total';

/** Go's codes.Code String() of a status name as our errors spell it (`DEADLINE_EXCEEDED`). */
export function goStatusName(code: string): string {
  if (code === 'OK') return 'OK';
  if (code === 'CANCELLED') return 'Canceled';
  if (!/^[A-Z_]+$/.test(code)) return code;
  return code
    .toLowerCase()
    .split('_')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}

interface CallSource {
  onCall(listener: (t: CsiCallInput) => void): () => void;
}

/** Observes every call of `csi` into the sidecar histogram; returns the stop function. */
export function recordSidecarOperations(csi: CallSource, metrics: MetricsRegistry): () => void {
  const h = metrics.histogram(
    'csi_sidecar_operations_seconds',
    HELP,
    ['driver_name', 'method_name', 'grpc_status_code'],
    CSI_OPERATION_BUCKETS,
  );
  return csi.onCall((t) =>
    h.observe(
      { driver_name: t.driver || 'unknown-driver', method_name: t.method, grpc_status_code: goStatusName(t.code) },
      t.durationMs / 1000,
    ),
  );
}

/** Observes every call of `csi` into the kubelet's histogram; returns the stop function. */
export function recordKubeletOperations(csi: CallSource, metrics: MetricsRegistry): () => void {
  const h = metrics.histogram(
    'csi_operations_seconds',
    HELP,
    ['driver_name', 'method_name', 'grpc_status_code', 'migrated'],
    CSI_OPERATION_BUCKETS,
  );
  return csi.onCall((t) =>
    h.observe(
      { driver_name: t.driver, method_name: t.method, grpc_status_code: goStatusName(t.code), migrated: 'false' },
      t.durationMs / 1000,
    ),
  );
}
