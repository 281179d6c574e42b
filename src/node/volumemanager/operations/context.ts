import type { CSIDriver, VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import type { ObjectReference } from 'kubernetes-types/core/v1.js';
import type { EventRecorder } from '../../../client/events.js';
import type { RestClient } from '../../../client/rest.js';
import type { Logger } from '../../../util/log.js';
import type { ActualStateOfWorld } from '../cache/actual-state.js';
import type { PodRef } from '../types.js';
import type { CsiClients } from './csi-clients.js';
import type { PriorityLimiter } from './limiter.js';

/** Cached API objects the operations consult (informer listers in production). */
export interface ApiLookups {
  csiDriver(name: string): CSIDriver | undefined;
  volumeAttachment(name: string): VolumeAttachment | undefined;
}

/** Everything an operation needs; built once by the volume manager. */
export interface OperationContext {
  readonly rootDir: string;
  readonly nodeName: string;
  readonly asw: ActualStateOfWorld;
  readonly csi: CsiClients;
  /** Bounds concurrent stage/publish/teardown driver calls (publish first). */
  readonly limiter: PriorityLimiter;
  readonly api: ApiLookups;
  readonly client: RestClient;
  readonly recorder: EventRecorder;
  readonly log: Logger;
}

export function podReference(p: PodRef): ObjectReference {
  return { kind: 'Pod', apiVersion: 'v1', namespace: p.namespace, name: p.name, uid: p.uid };
}

/** CSIDriver.spec.attachRequired; a driver without a CSIDriver object is attachable (kubelet default). */
export function attachRequired(api: ApiLookups, driver: string): boolean {
  return api.csiDriver(driver)?.spec.attachRequired ?? true;
}
