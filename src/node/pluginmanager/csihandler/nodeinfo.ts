import type { Node } from 'kubernetes-types/core/v1.js';
import type { CSINode } from 'kubernetes-types/storage/v1.js';
import type { RestClient } from '../../../client/rest.js';
import { NotFoundError, toStowageError } from '../../../util/errors.js';
import { newLogger, type Logger } from '../../../util/log.js';
import { realClock, type BackoffPolicy, type Clock } from '../../../util/backoff.js';
import { newObjectBatcher, type ObjectBatcher } from './batcher.js';
import { retryWithBackoff } from './retry.js';
import {
  attachLimitKey,
  csiNodeDriver,
  parseNodeIds,
  withCsiNodeDriver,
  withNodeId,
  withTopologyLabels,
  withoutCsiNodeDriver,
} from './node-updates.js';

/**
 * The kubelet's nodeinfomanager writes the CSINode entry under wait.ExponentialBackoff with its
 * updateBackoff (4 steps, 10 ms growing 5× each), so a transient API error (an etcd leader
 * election, a server restarting) does not fail the driver's registration.
 */
export const CSINODE_UPDATE_ATTEMPTS = 4;
export const CSINODE_UPDATE_BACKOFF: BackoffPolicy = { initialMs: 10, factor: 5, capMs: 250 };

/** The CSINode already lists the driver with other values: it must be removed before it is added. */
class EntryChanged extends Error {}

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
  /** Drivers the API lists for this node (CSINode entries and node-id annotation keys). */
  installedDrivers(signal: AbortSignal): Promise<string[]>;
}

/** All of this agent's edits of its Node's metadata go through one batcher (one write per batch). */
export function newNodeBatcher(client: RestClient, nodeName: string): ObjectBatcher<Node> {
  const nodes = client.resource('Node');
  return newObjectBatcher<Node>({
    get: () => nodes.getIfExists(nodeName),
    write: (next) => nodes.update(next),
  });
}

export function newCsiNodeBatcher(client: RestClient, nodeName: string): ObjectBatcher<CSINode> {
  const csinodes = client.resource('CSINode');
  return newObjectBatcher<CSINode>({
    get: () => csinodes.getIfExists(nodeName),
    write: (next, current) => (current ? csinodes.update(next) : csinodes.create(next)),
  });
}

export function newNodeInfoManager(o: {
  client: RestClient;
  nodeName: string;
  nodeBatcher?: ObjectBatcher<Node>;
  csiNodeBatcher?: ObjectBatcher<CSINode>;
  log?: Logger;
  clock?: Clock;
}): NodeInfoManager {
  return new Manager(
    o.client,
    o.nodeName,
    o.nodeBatcher ?? newNodeBatcher(o.client, o.nodeName),
    o.csiNodeBatcher ?? newCsiNodeBatcher(o.client, o.nodeName),
    o.log ?? newLogger('pluginmanager/nodeinfo'),
    o.clock ?? realClock,
  );
}

class Manager implements NodeInfoManager {
  constructor(
    private readonly client: RestClient,
    private readonly nodeName: string,
    private readonly node: ObjectBatcher<Node>,
    private readonly csinode: ObjectBatcher<CSINode>,
    private readonly log: Logger,
    private readonly clock: Clock,
  ) {}

  private requireNode(cur: Node | undefined): Node {
    if (!cur) throw new NotFoundError(`node ${this.nodeName} does not exist (yet)`);
    return cur;
  }

  async installDriver(d: DriverNodeInfo, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    // Filled by the edit's last run: what to put back if the CSINode write fails.
    let undo = { prevNodeId: undefined as string | undefined, annotated: false, addedLabels: [] as string[] };
    const written = await this.node.apply((c) => {
      const cur = this.requireNode(c);
      const annotations = withNodeId(cur.metadata?.annotations, d.driver, d.nodeId);
      const labels = withTopologyLabels(cur.metadata?.labels, d.topology);
      undo = {
        prevNodeId: parseNodeIds(cur.metadata?.annotations)[d.driver],
        annotated: annotations !== undefined,
        addedLabels: labels?.added ?? [],
      };
      if (!annotations && !labels) return undefined;
      return {
        ...cur,
        metadata: {
          ...cur.metadata,
          annotations: annotations ?? cur.metadata?.annotations,
          labels: labels?.labels ?? cur.metadata?.labels,
        },
      };
    });
    const node = this.requireNode(written);
    try {
      signal.throwIfAborted();
      const entry = csiNodeDriver(d.driver, d.nodeId, Object.keys(d.topology), d.maxVolumesPerNode);
      // A CSINode driver entry is immutable (Kubernetes validation): one that changed (a new node
      // id, say) is removed in a first write and added back in a second.
      const add = (cur: CSINode | undefined): CSINode | undefined => withCsiNodeDriver(cur, node, entry);
      const writeEntry = async (): Promise<void> => {
        try {
          await this.csinode.apply((cur) => {
            if (cur?.spec.drivers?.some((x) => x.name === d.driver) && add(cur)) throw new EntryChanged();
            return add(cur);
          });
        } catch (e) {
          if (!(e instanceof EntryChanged)) throw e;
          await this.csinode.apply((cur) => (cur ? withoutCsiNodeDriver(cur, d.driver) : undefined));
          await this.csinode.apply(add);
        }
      };
      await retryWithBackoff(writeEntry, {
        attempts: CSINODE_UPDATE_ATTEMPTS,
        policy: CSINODE_UPDATE_BACKOFF,
        clock: this.clock,
        signal,
      });
    } catch (e) {
      if (undo.annotated || undo.addedLabels.length > 0)
        await this.undoNode(d, undo.prevNodeId, undo.annotated, undo.addedLabels);
      throw e;
    }
  }

  private async undoNode(
    d: DriverNodeInfo,
    prevNodeId: string | undefined,
    annotated: boolean,
    addedLabels: string[],
  ): Promise<void> {
    try {
      await this.node.apply((c) => {
        if (!c) return undefined;
        const annotations = annotated ? withNodeId(c.metadata?.annotations, d.driver, prevNodeId) : undefined;
        const labels = { ...c.metadata?.labels };
        const drop = addedLabels.filter((k) => labels[k] === d.topology[k]);
        for (const k of drop) delete labels[k];
        if (!annotations && drop.length === 0) return undefined;
        return { ...c, metadata: { ...c.metadata, annotations: annotations ?? c.metadata?.annotations, labels } };
      });
    } catch (e) {
      this.log.error('could not undo a half-written driver registration on the Node', {
        driver: d.driver,
        error: toStowageError(e).message,
      });
    }
  }

  async installedDrivers(signal: AbortSignal): Promise<string[]> {
    signal.throwIfAborted();
    const [csinode, node] = await Promise.all([this.csinode.apply(() => undefined), this.node.apply(() => undefined)]);
    const names = new Set((csinode?.spec.drivers ?? []).map((d) => d.name));
    for (const k of Object.keys(parseNodeIds(node?.metadata?.annotations))) names.add(k);
    return [...names].sort();
  }

  async uninstallDriver(driver: string, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    await this.csinode.apply((cur) => (cur ? withoutCsiNodeDriver(cur, driver) : undefined));
    const node = await this.node.apply((cur) => {
      const annotations = cur && withNodeId(cur.metadata?.annotations, driver, undefined);
      return cur && annotations ? { ...cur, metadata: { ...cur.metadata, annotations } } : undefined;
    });
    const key = attachLimitKey(driver);
    if (node?.status?.capacity?.[key] !== undefined || node?.status?.allocatable?.[key] !== undefined) {
      await this.client
        .resource('Node')
        .patchStatus(
          this.nodeName,
          'merge',
          { status: { capacity: { [key]: null }, allocatable: { [key]: null } } },
          { signal },
        );
    }
  }
}
