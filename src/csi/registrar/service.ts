/** The plugin-registration service a CSI plugin offers the kubelet on `<name>-reg.sock`. */
import { writeFile } from 'node:fs/promises';
import type * as grpc from '@grpc/grpc-js';
import type { PluginInfo, RegistrationHandlers, RegistrationStatusResponse } from '../proto/types.js';
import type { Logger } from '../../util/log.js';

// node-driver-registrar only ever advertises this version of the registration API.
export const SUPPORTED_VERSIONS = ['1.0.0'] as const;

export interface RegistrationServiceOptions {
  readonly driverName: string;
  /** Returned verbatim as PluginInfo.endpoint (--kubelet-registration-path). */
  readonly kubeletRegistrationPath: string;
  /** Touched on every GetInfo so an exec probe can tell the kubelet has asked (upstream behaviour). */
  readonly probeFile: string;
  readonly log: Logger;
  /** The kubelet refused us. The call is deliberately never answered (upstream exits first). */
  readonly onRefused: (reason: string) => void;
  readonly onRegistered?: () => void;
}

export function pluginInfo(o: Pick<RegistrationServiceOptions, 'driverName' | 'kubeletRegistrationPath'>): PluginInfo {
  return {
    type: 'CSIPlugin',
    name: o.driverName,
    endpoint: o.kubeletRegistrationPath,
    supportedVersions: [...SUPPORTED_VERSIONS],
  };
}

export function registrationHandlers(o: RegistrationServiceOptions): RegistrationHandlers {
  return {
    GetInfo: (_call, cb) => {
      o.log.info('received GetInfo call from the kubelet');
      writeFile(o.probeFile, '')
        .then(
          () => undefined,
          (e: unknown) =>
            o.log.warn('could not touch registration probe file', { file: o.probeFile, error: String(e) }),
        )
        .finally(() => cb(null, pluginInfo(o)));
    },
    NotifyRegistrationStatus: (
      call: grpc.ServerUnaryCall<{ pluginRegistered: boolean; error: string }, RegistrationStatusResponse>,
      cb,
    ) => {
      const { pluginRegistered, error } = call.request;
      if (pluginRegistered) {
        o.log.info('plugin registered by the kubelet', { driver: o.driverName });
        o.onRegistered?.();
        cb(null, {});
        return;
      }
      o.log.error('registration refused by the kubelet; stopping', { driver: o.driverName, reason: error });
      o.onRefused(error);
    },
  };
}
