/** A fault-injecting CSI driver for tests: forwards Identity/Node calls to a real driver, with hooks. */
import * as grpc from '@grpc/grpc-js';
import { CsiClient } from '../src/csi/client.js';
import { handler, startFakeDriver, type FakeDriver } from '../src/csi/fake-driver.test-kit.js';

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
  readonly publishAt: number[];
}

export interface Proxy {
  readonly driver: FakeDriver;
  readonly controls: ProxyControls;
  /** Method names of the calls forwarded or refused, in order. */
  readonly calls: string[];
  stop(): Promise<void>;
}

export async function startProxy(o: { socket: string; upstream: string; name: string }): Promise<Proxy> {
  const up = new CsiClient({ endpoint: o.upstream });
  const controls: ProxyControls = { publishFailures: 0, publishAt: [] };
  const fwd = <R>(fn: (req: never) => Promise<R>) => handler((req: unknown) => fn(req as never));
  const driver = await startFakeDriver({
    socket: o.socket,
    name: o.name,
    identity: { GetPluginInfo: fwd(() => up.getPluginInfo()) },
    node: {
      NodeGetCapabilities: fwd(() => up.nodeGetCapabilities()),
      NodeStageVolume: fwd((r) => up.nodeStageVolume(r)),
      NodeUnstageVolume: fwd((r) => up.nodeUnstageVolume(r)),
      NodeUnpublishVolume: fwd(async (r) => {
        controls.onUnpublish?.();
        if (controls.unpublishGate) await controls.unpublishGate;
        return up.nodeUnpublishVolume(r);
      }),
      NodeExpandVolume: fwd((r) => up.nodeExpandVolume(r)),
      NodePublishVolume: fwd(async (r) => {
        controls.publishAt.push(Date.now());
        controls.onPublish?.();
        if (controls.publishFailures > 0) {
          controls.publishFailures--;
          throw { code: grpc.status.INTERNAL, details: 'injected publish failure' };
        }
        if (controls.publishGate) await controls.publishGate;
        return up.nodePublishVolume(r);
      }),
    },
  });
  return {
    driver,
    controls,
    calls: driver.calls,
    stop: async () => {
      await driver.stop();
      up.close();
    },
  };
}
