/**
 * A fault-injecting CSI proxy: listens on one unix socket, forwards every CSI call (Identity,
 * Controller, Node) to a driver's socket unchanged (messages pass as raw bytes, deadlines and
 * cancellation propagate), and lets a `decide` function inject a fault per call: an error with a
 * chosen gRPC code, a delay, a hang past the caller's deadline, or dropped connections. "Forwarded"
 * faults let the driver act and lose its reply: the caller must cope with an effect it never saw.
 */
import { rmSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { csiServices } from '../../src/csi/proto/index.js';

export type CsiFault =
  /** Answered with `code` without reaching the driver. */
  | { readonly kind: 'error'; readonly code: grpc.status; readonly details?: string }
  /** Forwarded; the driver's reply is replaced by `code` (the effect happened, the caller hears a failure). */
  | { readonly kind: 'errorAfter'; readonly code: grpc.status }
  /** Forwarded after `ms`. */
  | { readonly kind: 'delay'; readonly ms: number }
  /** Never answered: the caller's deadline passes. With `forward` the driver still gets the call. */
  | { readonly kind: 'hang'; readonly forward: boolean }
  /** Every connection to the proxy is dropped (the caller sees UNAVAILABLE); with `forward`, after the driver acted. */
  | { readonly kind: 'drop'; readonly forward: boolean };

/** Chooses the fault of one call (undefined: forward untouched). May wait, e.g. on a test's gate. */
export type FaultDecider = (method: string) => CsiFault | undefined | Promise<CsiFault | undefined>;

export interface FaultProxy {
  readonly endpoint: string;
  /** Method names of the calls received, in order. */
  readonly calls: string[];
  /** Faults injected, by kind and method, e.g. `error:CreateVolume`. */
  readonly injected: Map<string, number>;
  /** Replaces the decider (e.g. to stop injecting before a final convergence). */
  setDecider(d: FaultDecider | undefined): void;
  /** Drops every connection now (as a driver restart would). */
  dropConnections(): Promise<void>;
  stop(): Promise<void>;
}

const raw = (b: Buffer): Buffer => b;

/** The service's methods with identity (de)serializers: the proxy never decodes a message. */
function rawService(def: grpc.ServiceDefinition): grpc.ServiceDefinition {
  return Object.fromEntries(
    Object.entries(def).map(([name, m]) => [
      name,
      { ...m, requestSerialize: raw, requestDeserialize: raw, responseSerialize: raw, responseDeserialize: raw },
    ]),
  );
}

const unavailable = (details: string): Partial<grpc.StatusObject> => ({ code: grpc.status.UNAVAILABLE, details });

export async function startFaultProxy(o: {
  socket: string;
  upstream: string;
  decide?: FaultDecider;
}): Promise<FaultProxy> {
  const upstream = new grpc.Client(
    o.upstream.startsWith('unix:') ? o.upstream : `unix://${o.upstream}`,
    grpc.credentials.createInsecure(),
    {
      // A restarted driver is found again within a second, not after grpc's default 120 s backoff cap.
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 1_000,
    },
  );
  let decide = o.decide;
  const calls: string[] = [];
  const injected = new Map<string, number>();
  let server: grpc.Server | undefined;

  const forward = (
    path: string,
    req: Buffer,
    call: grpc.ServerUnaryCall<Buffer, Buffer>,
  ): Promise<{ err: grpc.ServiceError | null; res?: Buffer }> =>
    new Promise((resolve) => {
      const deadline = call.getDeadline();
      const up = upstream.makeUnaryRequest(
        path,
        raw,
        raw,
        req,
        new grpc.Metadata(),
        { deadline: deadline === Infinity ? Infinity : deadline },
        (err, res) => resolve({ err, res }),
      );
      call.once('cancelled', () => up.cancel());
    });

  const handlerFor =
    (method: string, path: string): grpc.handleUnaryCall<Buffer, Buffer> =>
    (call, cb) => {
      calls.push(method);
      void (async () => {
        let fault: CsiFault | undefined;
        try {
          fault = await decide?.(method);
        } catch (e) {
          // A decider may throw a gRPC status ({ code, details }) directly.
          cb(e as grpc.ServiceError);
          return;
        }
        if (fault) injected.set(`${fault.kind}:${method}`, (injected.get(`${fault.kind}:${method}`) ?? 0) + 1);
        switch (fault?.kind) {
          case undefined:
            break;
          case 'error':
            cb({ code: fault.code, details: fault.details ?? `injected ${grpc.status[fault.code]} for ${method}` });
            return;
          case 'errorAfter':
            await forward(path, call.request, call);
            cb({
              code: fault.code,
              details: `injected ${grpc.status[fault.code]} for ${method} after the driver acted`,
            });
            return;
          case 'delay':
            await new Promise((r) => setTimeout(r, fault.ms));
            break;
          case 'hang':
            if (fault.forward) await forward(path, call.request, call);
            return; // never answered: the caller's deadline (or cancellation) ends the call
          case 'drop':
            if (fault.forward) await forward(path, call.request, call);
            await dropConnections();
            return;
        }
        const { err, res } = await forward(path, call.request, call);
        if (err) cb(err);
        else cb(null, res);
      })().catch((e: unknown) => cb(unavailable(`fault proxy: ${e instanceof Error ? e.message : String(e)}`)));
    };

  const listen = async (): Promise<void> => {
    rmSync(o.socket, { force: true });
    const s = new grpc.Server();
    for (const def of Object.values(csiServices())) {
      const svc = rawService(def);
      s.addService(svc, Object.fromEntries(Object.entries(svc).map(([name, m]) => [name, handlerFor(name, m.path)])));
    }
    await new Promise<void>((resolve, reject) =>
      s.bindAsync(`unix://${o.socket}`, grpc.ServerCredentials.createInsecure(), (err) =>
        err ? reject(err) : resolve(),
      ),
    );
    server = s;
  };

  let dropping: Promise<void> | undefined;
  const dropConnections = (): Promise<void> => {
    dropping ??= (async () => {
      server?.forceShutdown();
      server = undefined;
      await listen();
    })().finally(() => (dropping = undefined));
    return dropping;
  };

  await listen();
  return {
    endpoint: `unix://${o.socket}`,
    calls,
    injected,
    setDecider: (d) => (decide = d),
    dropConnections,
    stop: async () => {
      await dropping;
      server?.forceShutdown();
      server = undefined;
      upstream.close();
    },
  };
}
