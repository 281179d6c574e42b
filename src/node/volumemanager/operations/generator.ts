import type { Histogram } from '../../../util/metrics.js';
import { assertNever } from '../../../util/errors.js';
import type { Operation, OpKey } from '../../../util/executor.js';
import type { ReconcileOp } from '../reconciler/reconcile.js';
import type { PodRef, VolumeSpec } from '../types.js';
import { podReference, type OperationContext } from './context.js';
import { pluginFor } from '../plugins/registry.js';
import { csiExpand } from './csi.js';

/** One runnable operation for the executor: its key (volume, and pod for per-pod work), kubelet metric name and body. */
export interface GeneratedOperation {
  readonly key: Exclude<OpKey, string>;
  readonly name: string;
  readonly run: Operation;
}

/** `volume_plugin` label: CSI volumes as `kubernetes.io/csi:<driver>`, as the kubelet reports them. */
export function pluginLabel(spec: VolumeSpec): string {
  return spec.csi ? `${spec.plugin}:${spec.csi.driver}` : spec.plugin;
}

interface Failure {
  readonly pod?: PodRef;
  readonly reason: string;
  readonly message: (e: unknown) => string;
}

const why = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** Decisions that are work for the executor; `markDetached` only updates the ASW (the caller does it). */
export type ExecutableOp = Exclude<ReconcileOp, { kind: 'markDetached' }>;

/**
 * Turns a reconciler decision into an executor operation: dispatch to the spec's plugin (no
 * per-operation switch over volume types), a Warning event on
 * the pod on failure (Kubernetes reasons, messages naming the volume and the cause) and the
 * storage_operation_duration_seconds observation. Returns the work without running any of it;
 * failures are logged by the executor.
 */
export function generate(ctx: OperationContext, op: ExecutableOp, durations?: Histogram): GeneratedOperation {
  const wrap = (
    key: GeneratedOperation['key'],
    name: string,
    spec: VolumeSpec,
    body: (s: AbortSignal) => Promise<void>,
    fail?: Failure,
  ): GeneratedOperation => ({
    key,
    name,
    run: async (signal) => {
      const t0 = performance.now();
      try {
        await body(signal);
        durations?.observe(
          { operation_name: name, volume_plugin: pluginLabel(spec), status: 'success' },
          (performance.now() - t0) / 1000,
        );
      } catch (e) {
        durations?.observe(
          { operation_name: name, volume_plugin: pluginLabel(spec), status: 'fail-unknown' },
          (performance.now() - t0) / 1000,
        );
        if (fail?.pod && !signal.aborted)
          ctx.recorder.event(podReference(fail.pod), 'Warning', fail.reason, fail.message(e));
        throw e;
      }
    },
  });

  switch (op.kind) {
    case 'verifyAttached': {
      const t = op.toMount;
      const plugin = pluginFor(t.spec);
      return wrap(
        { volume: op.volume },
        'verify_controller_attached_volume',
        t.spec,
        async (s) => {
          if (plugin.verifyAttached) await plugin.verifyAttached(ctx, t, s);
          else ctx.asw.markVolumeAttached(t.volume, t.spec, '');
        },
        {
          pod: t.pod,
          reason: 'FailedAttachVolume',
          message: (e) => `AttachVolume.Attach failed for volume "${t.spec.specName}" : ${why(e)}`,
        },
      );
    }
    case 'mountDevice': {
      const t = op.toMount;
      const reason = t.spec.mode === 'Block' ? 'FailedMapVolume' : 'FailedMount';
      const verb = t.spec.mode === 'Block' ? 'MapVolume.MapPodDevice' : 'MountVolume.MountDevice';
      const plugin = pluginFor(t.spec);
      const body = async (s: AbortSignal): Promise<void> => {
        if (plugin.mountDevice) await plugin.mountDevice(ctx, t, s);
        else ctx.asw.markDeviceMounted(t.volume, t.spec, '', 'Mounted');
      };
      return wrap({ volume: op.volume }, 'mount_device', t.spec, body, {
        pod: t.pod,
        reason,
        message: (e) => `${verb} failed for volume "${t.spec.specName}" : ${why(e)}`,
      });
    }
    case 'setUp': {
      const t = op.toMount;
      const plugin = pluginFor(t.spec);
      const body = (s: AbortSignal): Promise<void> => plugin.setUp(ctx, t, s);
      const reason = t.spec.mode === 'Block' ? 'FailedMapVolume' : 'FailedMount';
      const verb = t.spec.mode === 'Block' ? 'MapVolume.SetUpDevice' : 'MountVolume.SetUp';
      return wrap(
        { volume: op.volume, pod: op.pod },
        t.spec.mode === 'Block' ? 'map_volume' : 'volume_mount',
        t.spec,
        body,
        { pod: t.pod, reason, message: (e) => `${verb} failed for volume "${t.spec.specName}" : ${why(e)}` },
      );
    }
    case 'expand': {
      const t = op.toMount;
      return wrap(
        { volume: op.volume, pod: op.pod },
        'volume_fs_resize',
        t.spec,
        async (s) => {
          await csiExpand(ctx, t, s);
          ctx.recorder.event(
            podReference(t.pod),
            'Normal',
            'VolumeResizeSuccessful',
            `MountVolume.NodeExpandVolume succeeded for volume "${t.spec.specName}"`,
          );
        },
        {
          pod: t.pod,
          reason: 'VolumeResizeFailed',
          message: (e) => `MountVolume.NodeExpandVolume failed for volume "${t.spec.specName}" : ${why(e)}`,
        },
      );
    }
    case 'unmountVolume': {
      const m = op.mounted;
      const plugin = pluginFor(m.spec);
      return wrap(
        { volume: op.volume, pod: op.pod },
        m.spec.mode === 'Block' ? 'unmap_volume' : 'volume_unmount',
        m.spec,
        (s) => plugin.tearDown(ctx, m, s),
      );
    }
    case 'unmountDevice': {
      const v = op.attached;
      const plugin = pluginFor(v.spec);
      return wrap({ volume: op.volume }, 'unmount_device', v.spec, async (s) => {
        if (plugin.unmountDevice) await plugin.unmountDevice(ctx, v, s);
        else ctx.asw.markDeviceUnmounted(v.volume);
      });
    }
    default:
      return assertNever(op);
  }
}
