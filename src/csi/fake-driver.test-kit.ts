/** A minimal in-process CSI driver on a unix socket, for tests of the client and the registrar. */
import * as grpc from '@grpc/grpc-js';
import { csiServices } from './proto/index.js';
import type { UntypedServiceImplementation } from '@grpc/grpc-js';

export interface FakeDriver {
  readonly endpoint: string;
  readonly calls: string[];
  stop(): Promise<void>;
}

type Handlers = UntypedServiceImplementation;

/** Wraps a plain async function as a grpc-js unary handler; a thrown `{code, details}` becomes the status. */
export function handler<Req, Res>(fn: (req: Req) => Promise<Res> | Res): grpc.handleUnaryCall<Req, Res> {
  return (call, cb) => {
    Promise.resolve()
      .then(() => fn(call.request))
      .then(
        (res) => cb(null, res),
        (e: grpc.ServiceError) => cb(e),
      );
  };
}

export async function startFakeDriver(o: {
  socket: string;
  name?: string;
  nodeId?: string;
  identity?: Handlers;
  controller?: Handlers;
  node?: Handlers;
}): Promise<FakeDriver> {
  const calls: string[] = [];
  const track = (hs: Handlers): Handlers =>
    Object.fromEntries(
      Object.entries(hs).map(([k, h]) => [
        k,
        ((call: grpc.ServerUnaryCall<unknown, unknown>, cb: grpc.sendUnaryData<unknown>) => {
          calls.push(k);
          (h as grpc.handleUnaryCall<unknown, unknown>)(call, cb);
        }) as grpc.handleUnaryCall<unknown, unknown>,
      ]),
    );
  const s = csiServices();
  const server = new grpc.Server();
  server.addService(
    s.identity,
    track({
      GetPluginInfo: handler(() => ({ name: o.name ?? 'fake.csi.stowage.io', vendorVersion: '0.0.1' })),
      GetPluginCapabilities: handler(() => ({
        capabilities: [{ service: { type: 'CONTROLLER_SERVICE' } }, { volumeExpansion: { type: 'ONLINE' } }],
      })),
      Probe: handler(() => ({ ready: { value: true } })),
      ...o.identity,
    }),
  );
  server.addService(
    s.controller,
    track({
      ControllerGetCapabilities: handler(() => ({ capabilities: [{ rpc: { type: 'CREATE_DELETE_VOLUME' } }] })),
      ...o.controller,
    }),
  );
  server.addService(
    s.node,
    track({
      NodeGetInfo: handler(() => ({
        nodeId: o.nodeId ?? 'node-1',
        maxVolumesPerNode: 0,
        accessibleTopology: { segments: { 'topology.fake/node': o.nodeId ?? 'node-1' } },
      })),
      NodeGetCapabilities: handler(() => ({ capabilities: [{ rpc: { type: 'STAGE_UNSTAGE_VOLUME' } }] })),
      ...o.node,
    }),
  );
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${o.socket}`, grpc.ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  return {
    endpoint: `unix://${o.socket}`,
    calls,
    stop: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}
