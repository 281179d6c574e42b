/**
 * The default StorageClass of `stowage up`: created for the built-in driver only when no default
 * class exists and no class is named `standard`; `--no-default-class` leaves it out.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDefaultStorageClass } from '../src/cli/defaultclass.js';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import { built, isRoot } from './helpers/env.js';
import { api } from './helpers/http.js';
import { startUp } from './helpers/up.js';

const PROVISIONER = 'hostpath.csi.stowage.io';

describe('ensureDefaultStorageClass', () => {
  let s: TestApiServer;
  beforeAll(async () => {
    s = await startTestApiServer({ controllers: false });
  });
  afterAll(async () => {
    await s?.close();
  });
  const classes = () => s.plane.client.resource('StorageClass');
  const names = async (): Promise<string[]> => (await classes().list()).items.map((c) => c.metadata?.name ?? '').sort();

  it('creates `standard` when there is no default class, once', async () => {
    expect(await ensureDefaultStorageClass(s.plane.client, PROVISIONER)).toBe(true);
    const sc = await classes().get('standard');
    expect(sc.metadata?.annotations?.['storageclass.kubernetes.io/is-default-class']).toBe('true');
    expect(sc).toMatchObject({
      provisioner: PROVISIONER,
      volumeBindingMode: 'WaitForFirstConsumer',
      reclaimPolicy: 'Delete',
    });
    expect(await ensureDefaultStorageClass(s.plane.client, PROVISIONER)).toBe(false);
    await classes().delete('standard');
  });

  it('leaves a cluster with its own default class alone', async () => {
    await classes().create({
      metadata: { name: 'gold', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
      provisioner: 'example.com/gold',
    });
    expect(await ensureDefaultStorageClass(s.plane.client, PROVISIONER)).toBe(false);
    expect(await names()).toEqual(['gold']);
    await classes().delete('gold');
  });

  it('never changes a user class named `standard`', async () => {
    await classes().create({ metadata: { name: 'standard' }, provisioner: 'example.com/mine' });
    expect(await ensureDefaultStorageClass(s.plane.client, PROVISIONER)).toBe(false);
    const sc = await classes().get('standard');
    expect(sc.provisioner).toBe('example.com/mine');
    expect(sc.metadata?.annotations?.['storageclass.kubernetes.io/is-default-class']).toBeUndefined();
    await classes().delete('standard');
  });
});

describe.skipIf(!built || !isRoot)('stowage up --no-default-class', () => {
  it('runs the built-in driver without creating a class', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'stowage-noclass-'));
    const { child, exit, target } = await startUp(dataDir, 'noclass', ['--no-default-class']);
    try {
      // The CSIDriver object is written just before the class would be: its presence means the step has passed.
      expect((await api(target, 'GET', `/apis/storage.k8s.io/v1/csidrivers/${PROVISIONER}`)).status).toBe(200);
      expect((await api(target, 'GET', '/apis/storage.k8s.io/v1/storageclasses')).body.items).toEqual([]);
    } finally {
      child.kill('SIGTERM');
      await exit;
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
