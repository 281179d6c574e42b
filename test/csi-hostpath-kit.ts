/** Shared helpers for the hostpath CSI conformance tests: raw grpc-js clients and expectations. */
import * as grpc from '@grpc/grpc-js';
import { rm } from 'node:fs/promises';
import { expect } from 'vitest';
import { csiProto } from '../src/csi/proto/index.js';
import type { VolumeCapability } from '../src/csi/proto/types.js';
import type { Logger } from '../src/util/log.js';
import { detachLoop, listLoopDevices } from '../src/mount/loop.js';
import { unmount } from '../src/mount/mount.js';
import { mountsUnder } from '../src/mount/mountinfo.js';

export interface Clients {
  identity: grpc.Client;
  controller: grpc.Client;
  node: grpc.Client;
  close(): void;
}

export function connect(socketPath: string): Clients {
  const v1 = csiProto().csi.v1;
  const target = `unix:${socketPath}`;
  const creds = grpc.credentials.createInsecure();
  const identity = new v1.Identity(target, creds);
  const controller = new v1.Controller(target, creds);
  const node = new v1.Node(target, creds);
  return {
    identity,
    controller,
    node,
    close: () => {
      identity.close();
      controller.close();
      node.close();
    },
  };
}

type UnaryFn = (
  req: unknown,
  opts: grpc.CallOptions,
  cb: (err: grpc.ServiceError | null, res?: unknown) => void,
) => void;

/** Calls one unary method by name; rejects with the grpc ServiceError. */
export function call<T = Record<string, any>>(client: grpc.Client, method: string, req: object = {}): Promise<T> {
  const fn = (client as unknown as Record<string, UnaryFn>)[method];
  if (typeof fn !== 'function') throw new Error(`no method ${method}`);
  return new Promise((resolve, reject) => {
    fn.call(client, req, { deadline: Date.now() + 20_000 }, (err, res) => (err ? reject(err) : resolve(res as T)));
  });
}

/** Expects the call to fail with exactly `code`. */
export async function expectCode(p: Promise<unknown>, code: grpc.status): Promise<grpc.ServiceError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e as grpc.ServiceError,
  );
  expect(err, `expected ${grpc.status[code]}, got success`).toBeDefined();
  expect(grpc.status[err!.code], err!.details).toBe(grpc.status[code]);
  return err!;
}

type Mode = NonNullable<NonNullable<VolumeCapability['accessMode']>['mode']>;
export const mountCap = (mode: Mode = 'SINGLE_NODE_WRITER'): VolumeCapability => ({
  mount: { fsType: '', mountFlags: [] },
  accessMode: { mode },
});
export const blockCap = (mode: Mode = 'SINGLE_NODE_WRITER'): VolumeCapability => ({ block: {}, accessMode: { mode } });
export const MiB = 1024 * 1024;
export const GiB = 1024 * MiB;

/** Drops info/debug lines so test output stays readable; warnings and errors still print. */
export function quietLogger(): Logger {
  const err = (level: string) => (msg: string, f?: Record<string, unknown>) =>
    process.stderr.write(`${level} [csi-hostpath] ${msg} ${f ? JSON.stringify(f) : ''}\n`);
  const l: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: err('WARN'),
    error: err('ERROR'),
    child: () => l,
  };
  return l;
}

/** Removes `tmp` after tearing down any mount or loop device left in it, then fails if there were any. */
export async function removeAndExpectNothingLeft(tmp: string): Promise<void> {
  const left = await mountsUnder(tmp);
  for (const m of left) await unmount(m.mountPoint);
  const loops = (await listLoopDevices()).filter((l) => l.backingFile.startsWith(tmp));
  for (const l of loops) await detachLoop(l.device);
  await rm(tmp, { recursive: true, force: true });
  expect(
    left.map((m) => m.mountPoint),
    'mounts left behind',
  ).toEqual([]);
  expect(
    loops.map((l) => l.device),
    'loop devices left behind',
  ).toEqual([]);
}
