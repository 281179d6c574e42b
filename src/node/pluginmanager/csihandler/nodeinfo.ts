import type { Node } from 'kubernetes-types/core/v1.js';
import type { CSINode } from 'kubernetes-types/storage/v1.js';
import type { RestClient } from '../../../client/rest.js';
import { AlreadyExistsError, ConflictError, NotFoundError, toStowageError } from '../../../util/errors.js';
import { newLogger, type Logger } from '../../../util/log.js';
import {
  attachLimitKey, csiNodeDriver, parseNodeIds, withCsiNodeDriver, withNodeId, withTopologyLabels, withoutCsiNodeDriver,
} from './node-updates.js';
import { retryOnConflict } from './retry.js';

/** What NodeGetInfo told us about one driver on this node. */
export interface DriverNodeInfo {
  readonly driver: string;
  readonly nodeId: string;
  readonly topology: Readonly<Record<string, string>>;
  readonly maxVolumesPerNode: number;
}

/**
 * Publishes a driver's node information through the API: the Node's node-id annotation and
 * topology labels, and the CSINode entry (the kubelet's nodeinfomanager).
 */
export interface NodeInfoManager {
  /**
   * Writes the Node annotation and labels, then the CSINode entry, each with conflict retries.
   * If the CSINode write fails the Node changes are undone (best effort) before the error is thrown.
   * Throws InvalidError when a topology label collides, NotFoundError when the Node is missing.
   */
  installDriver(d: DriverNodeInfo, signal: AbortSignal): Promise<void>;
  /** Removes the driver from CSINode, the node-id annotation and the node's attach limits. Idempotent. */
  uninstallDriver(driver: string, signal: AbortSignal): Promise<void>;
}

export function newNodeInfoManager(o: { client: RestClient; nodeName: string; log?: Logger }): NodeInfoManager {
  return new Manager(o.client, o.nodeName, o.log ?? newLogger('pluginmanager/nodeinfo'));
}

class Manager implements NodeInfoManager {
  constructor(
    private readonly client: RestClient,
    private readonly nodeName: string,
    private readonly log: Logger,
  ) {}

  private get nodes() {
    return this.client.resource('Node');
  }
  private get csinodes() {
    return this.client.resource('CSINode');
  }

  async installDriver(d: DriverNodeInfo, signal: AbortSignal): Promise<void> {
    let prevNodeId: string | undefined;
    let annotated = false;
    let addedLabels: string[] = [];
    const node = await retryOnConflict(async () => {
      const cur = await this.nodes.get(this.nodeName, { signal });
      const annotations = withNodeId(cur.metadata?.annotations, d.driver, d.nodeId);
      const labels = withTopologyLabels(cur.metadata?.labels, d.topology);
      if (!annotations && !labels) return cur;
      prevNodeId = parseNodeIds(cur.metadata?.annotations)[d.driver];
      const next: Node = {
        ...cur,
        metadata: { ...cur.metadata, annotations: annotations ?? cur.metadata?.annotations, labels: labels?.labels ?? cur.metadata?.labels },
      };
      const written = await this.nodes.update(next, { signal });
      annotated = annotations !== undefined;
      addedLabels = labels?.added ?? [];
      return written;
    });
    try {
      const entry = csiNodeDriver(d.driver, d.nodeId, Object.keys(d.topology), d.maxVolumesPerNode);
      await retryOnConflict(async () => {
        const cur = await this.getCsiNode(signal);
        const next = withCsiNodeDriver(cur, node, entry);
        if (!next) return;
        if (cur) await this.csinodes.update(next, { signal });
        else {
          try {
            await this.csinodes.create(next, { signal });
          } catch (e) {
            // Created meanwhile (another driver registering): read it again and update.
            if (e instanceof AlreadyExistsError) throw new ConflictError(`CSINode ${this.nodeName} created concurrently`);
            throw e;
          }
        }
      });
    } catch (e) {
      if (annotated || addedLabels.length > 0) await this.undoNode(d, prevNodeId, annotated, addedLabels);
      throw e;
    }
  }

  private async undoNode(d: DriverNodeInfo, prevNodeId: string | undefined, annotated: boolean, addedLabels: string[]): Promise<void> {
    try {
      await retryOnConflict(async () => {
        const cur = await this.nodes.get(this.nodeName);
        const annotations = annotated ? withNodeId(cur.metadata?.annotations, d.driver, prevNodeId) : undefined;
        const labels = { ...cur.metadata?.labels };
        let labelsChanged = false;
        for (const k of addedLabels) {
          if (labels[k] === d.topology[k]) {
            delete labels[k];
            labelsChanged = true;
          }
        }
        if (!annotations && !labelsChanged) return;
        await this.nodes.update({ ...cur, metadata: { ...cur.metadata, annotations: annotations ?? cur.metadata?.annotations, labels } });
      });
    } catch (e) {
      this.log.error('could not undo a half-written driver registration on the Node', { driver: d.driver, error: toStowageError(e).message });
    }
  }

  async uninstallDriver(driver: string, signal: AbortSignal): Promise<void> {
    await retryOnConflict(async () => {
      const cur = await this.getCsiNode(signal);
      const next = cur && withoutCsiNodeDriver(cur, driver);
      if (next) await this.csinodes.update(next, { signal });
    });
    await retryOnConflict(async () => {
      const cur = await this.getNode(signal);
      const annotations = cur && withNodeId(cur.metadata?.annotations, driver, undefined);
      if (cur && annotations) await this.nodes.update({ ...cur, metadata: { ...cur.metadata, annotations } }, { signal });
    });
    const node = await this.getNode(signal);
    const key = attachLimitKey(driver);
    if (node?.status?.capacity?.[key] !== undefined || node?.status?.allocatable?.[key] !== undefined) {
      await this.nodes.patchStatus(this.nodeName, 'merge', { status: { capacity: { [key]: null }, allocatable: { [key]: null } } }, { signal });
    }
  }

  private async getCsiNode(signal: AbortSignal): Promise<CSINode | undefined> {
    try {
      return await this.csinodes.get(this.nodeName, { signal });
    } catch (e) {
      if (e instanceof NotFoundError) return undefined;
      throw e;
    }
  }

  private async getNode(signal: AbortSignal): Promise<Node | undefined> {
    try {
      return await this.nodes.get(this.nodeName, { signal });
    } catch (e) {
      if (e instanceof NotFoundError) return undefined;
      throw e;
    }
  }
}
