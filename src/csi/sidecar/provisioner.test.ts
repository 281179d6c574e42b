/**
 * The provisioner's executor paths that a real API server will not produce on demand: a PV that
 * cannot be saved (retried, the volume kept) and a PV saved by an earlier run.
 */
import type { PersistentVolume, PersistentVolumeClaim } from 'kubernetes-types/core/v1.js';
import type { StorageClass } from 'kubernetes-types/storage/v1.js';
import { describe, expect, it } from 'vitest';
import type { EventRecorder, RestClient } from '../../client/index.js';
import { AlreadyExistsError, InternalError, NotFoundError, StowageError, UnavailableError } from '../../util/errors.js';
import type { CsiClient } from '../client.js';
import type * as T from '../proto/types.js';
import type { SidecarContext } from './context.js';
import { newProvisioner } from './provisioner.js';

const D = 'd.example.com';
const claim: PersistentVolumeClaim = {
  metadata: { name: 'c', namespace: 'ns', uid: 'u1', annotations: { 'volume.kubernetes.io/storage-provisioner': D } },
  spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'sc', resources: { requests: { storage: '1Mi' } } },
};
const cls: StorageClass = { metadata: { name: 'sc' }, provisioner: D };

function lister<T>(items: Record<string, T>) {
  return {
    lister: {
      get: (a: string, b?: string) => items[b === undefined ? a : `${a}/${b}`],
      list: () => Object.values(items),
    },
  };
}

function setup(
  createPv: (pv: PersistentVolume) => Promise<PersistentVolume>,
  getPv?: () => Promise<PersistentVolume>,
  o: { claims?: Record<string, PersistentVolumeClaim>; classes?: Record<string, StorageClass> } = {},
) {
  const events: string[] = [];
  const calls: string[] = [];
  const recorder: EventRecorder = {
    event: (_o, _t, reason, message) => void events.push(`${reason}: ${message}`),
    flush: async () => undefined,
    close: async () => undefined,
  };
  const resources: Record<string, unknown> = {
    StorageClass: {
      get: async (name: string) => {
        calls.push(`getClass ${name}`);
        throw new NotFoundError('not found');
      },
    },
    PersistentVolume: {
      get: async () => {
        throw new NotFoundError('not found');
      },
      create: async (pv: PersistentVolume) => {
        calls.push('createPV');
        return createPv(pv);
      },
    },
  };
  if (getPv) (resources.PersistentVolume as { get: () => Promise<PersistentVolume> }).get = getPv;
  const client = { resource: (k: string) => resources[k] } as unknown as RestClient;
  const csi = {
    createVolume: async (r: T.CreateVolumeRequest) => {
      calls.push(`CreateVolume ${r.name}`);
      return {
        volume: {
          volumeId: 'vol-1',
          capacityBytes: 1 << 20,
          volumeContext: {},
          contentSource: null,
          accessibleTopology: [],
        },
      };
    },
    deleteVolume: async (r: T.DeleteVolumeRequest) => {
      calls.push(`DeleteVolume ${r.volumeId}`);
      return {};
    },
  } as unknown as CsiClient;
  const ctx = {
    client,
    csi,
    driver: D,
    controllerCaps: new Set(['CREATE_DELETE_VOLUME']),
    topologyAware: false,
    informers: {
      claims: lister(o.claims ?? { 'ns/c': claim }),
      volumes: lister({}),
      classes: lister(o.classes ?? { sc: cls }),
      csiNodes: lister({}),
      nodes: lister({}),
      attachments: lister({}),
    },
    log: {
      debug: () => undefined,
      info: () => undefined,
      warn: () => undefined,
      error: () => undefined,
      child: () => ctx.log,
    },
    csiTimeoutMs: 1000,
  } as unknown as SidecarContext;
  const p = newProvisioner(ctx, {
    recorder,
    saveAttempts: 3,
    saveRetryDelayMs: 0,
    clock: { now: () => 0, sleep: async () => undefined },
  });
  return { p, events, calls };
}

describe('provisioner executor', () => {
  it('asks the API for a class missing from its cache only for a claim handed to this driver', async () => {
    const other = { ...claim, metadata: { ...claim.metadata, name: 'o', annotations: {} } };
    const { p, calls } = setup(async (pv) => pv, undefined, { claims: { 'ns/c': claim, 'ns/o': other }, classes: {} });
    await p.reconcile('ns/o', new AbortController().signal);
    expect(calls).toEqual([]);
    await expect(p.reconcile('ns/c', new AbortController().signal)).rejects.toThrow(NotFoundError);
    expect(calls).toEqual(['getClass sc']);
  });

  it('retries saving the PV, then reports it and leaves the volume for the retry (never deleted: the PV may exist after all)', async () => {
    const { p, events, calls } = setup(async () => {
      throw new InternalError('etcd is sad');
    });
    const err = await p.reconcile('ns/c', new AbortController().signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StowageError);
    expect((err as StowageError).retryable).toBe(true);
    expect((err as Error).message).toMatch(/etcd is sad/);
    expect(calls).toEqual(['CreateVolume pvc-u1', 'createPV', 'createPV', 'createPV']);
    expect(events).toEqual([
      'Provisioning: External provisioner is provisioning volume for claim "ns/c"',
      'ProvisioningFailed: Error creating provisioned PV object for claim ns/c: etcd is sad. Will retry.',
    ]);
  });

  it('a PV stored though its create failed (the API server died before answering, and stayed down): the volume is kept, the retry finds the PV', async () => {
    let stored: PersistentVolume | undefined;
    const { p, calls } = setup(
      async (pv) => {
        stored ??= pv; // the first create is committed, its reply lost; the server is then down
        throw new UnavailableError('connect ECONNREFUSED');
      },
      async () => {
        if (!stored) throw new NotFoundError('not found');
        return stored;
      },
    );
    // The first look (before CreateVolume) finds no PV; the save attempts fail; nothing is deleted.
    await expect(p.reconcile('ns/c', new AbortController().signal)).rejects.toThrow(/ECONNREFUSED/);
    expect(calls.filter((c) => c.startsWith('DeleteVolume'))).toEqual([]);
    // The retry sees the stored PV and is done.
    await p.reconcile('ns/c', new AbortController().signal);
    expect(calls).toEqual(['CreateVolume pvc-u1', 'createPV', 'createPV', 'createPV']);
  });

  it('a PV already saved for this claim (AlreadyExists, same uid) counts as success', async () => {
    let gets = 0;
    const mine: PersistentVolume = { metadata: { name: 'pvc-u1' }, spec: { claimRef: { uid: 'u1' } } };
    const { p, events, calls } = setup(
      async () => {
        throw new AlreadyExistsError('persistentvolumes "pvc-u1" already exists');
      },
      // Absent when the claim is first looked at, present when the failed create is checked.
      async () => {
        if (gets++ === 0) throw new NotFoundError('not found');
        return mine;
      },
    );
    await p.reconcile('ns/c', new AbortController().signal);
    expect(calls).toEqual(['CreateVolume pvc-u1', 'createPV']);
    expect(events.at(-1)).toBe('ProvisioningSucceeded: Successfully provisioned volume pvc-u1');
  });

  it('stops after CreateVolume when aborted, leaving the volume for the next run', async () => {
    const ac = new AbortController();
    const { p, calls } = setup(async (pv) => pv);
    const origCreate = calls.push.bind(calls);
    calls.push = (...items: string[]) => {
      if (items[0]?.startsWith('CreateVolume')) ac.abort();
      return origCreate(...items);
    };
    await expect(p.reconcile('ns/c', ac.signal)).rejects.toThrow();
    expect([...calls]).toEqual(['CreateVolume pvc-u1']);
  });
});
