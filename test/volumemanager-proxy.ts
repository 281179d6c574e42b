/** The fault proxy (bench/chaos/fault-proxy.ts) with the publish/unpublish hooks the volume manager tests use. */
import * as grpc from '@grpc/grpc-js';
import { startFaultProxy, type CsiFault } from '../bench/chaos/fault-proxy.js';

export interface ProxyControls {
  /** NodePublishVolume fails with INTERNAL this many more times. */
  publishFailures: number;
  /** When set, NodePublishVolume waits for it before forwarding. */
  publishGate?: Promise<void>;
  /** Called when a NodePublishVolume arrives (before the gate). */
  onPublish?: () => void;
  /** When set, NodeUnpublishVolume waits for it before forwarding; onUnpublish is called on arrival. */
  unpublishGate?: Promise<void>;
  onUnpublish?: () => void;
  /** Faults for the next NodeUnstageVolume calls, in order; onUnstage is called on arrival, then unstageGate awaited. */
  readonly unstageFaults: CsiFault[];
  onUnstage?: () => void;
  unstageGate?: Promise<void>;
  readonly publishAt: number[];
  /** When set, NodeStageVolume is delayed this many ms (asked per call) before forwarding. */
  stageDelayMs?: () => number;
}

export interface Proxy {
  readonly driver: { readonly endpoint: string };
  readonly controls: ProxyControls;
  /** Method names of the calls forwarded or refused, in order. */
  readonly calls: string[];
  stop(): Promise<void>;
}

export async function startProxy(o: { socket: string; upstream: string }): Promise<Proxy> {
  const controls: ProxyControls = { publishFailures: 0, publishAt: [], unstageFaults: [] };
  const decide = async (method: string): Promise<CsiFault | undefined> => {
    if (method === 'NodeUnpublishVolume') {
      controls.onUnpublish?.();
      if (controls.unpublishGate) await controls.unpublishGate;
    }
    if (method === 'NodeUnstageVolume') {
      controls.onUnstage?.();
      if (controls.unstageGate) await controls.unstageGate;
      return controls.unstageFaults.shift();
    }
    if (method === 'NodeStageVolume' && controls.stageDelayMs) {
      const ms = controls.stageDelayMs();
      if (ms > 0) return { kind: 'delay', ms };
    }
    if (method === 'NodePublishVolume') {
      controls.publishAt.push(Date.now());
      controls.onPublish?.();
      if (controls.publishFailures > 0) {
        controls.publishFailures--;
        return { kind: 'error', code: grpc.status.INTERNAL, details: 'injected publish failure' };
      }
      if (controls.publishGate) await controls.publishGate;
    }
    return undefined;
  };
  const proxy = await startFaultProxy({ socket: o.socket, upstream: o.upstream, decide });
  return { driver: { endpoint: proxy.endpoint }, controls, calls: proxy.calls, stop: () => proxy.stop() };
}
