import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, built, isRoot } from './helpers/env.js';
import { afterAll, describe, expect, it } from 'vitest';
import { api } from './helpers/http.js';
import { startUp, type RunningUp } from './helpers/up.js';

if (!built) console.warn('stowage up tests skipped: run `npm run build` first (npm test does)');

const up = (dataDir: string, extra: string[] = []): Promise<RunningUp> => startUp(dataDir, ['--node-name', 'testnode', ...extra]);

describe.skipIf(!built)('stowage up', () => {
  const dirs: string[] = [];
  const tmp = (): string => {
    const d = mkdtempSync(join(tmpdir(), 'stowage-up-'));
    dirs.push(d);
    return d;
  };
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it.skipIf(!isRoot)('registers the built-in hostpath driver with its node, stops cleanly on SIGTERM, and restarts with its data', async () => {
    const dataDir = tmp();
    const a = await up(dataDir);
    try {
      await expect
        .poll(async () => (await api(a.target, 'GET', '/apis/storage.k8s.io/v1/csinodes/testnode')).body?.spec?.drivers?.[0], { timeout: 15_000 })
        .toMatchObject({ name: 'hostpath.csi.stowage.io', nodeID: 'testnode', topologyKeys: ['topology.hostpath.csi.stowage.io/node'] });
      const drv = await api(a.target, 'GET', '/apis/storage.k8s.io/v1/csidrivers/hostpath.csi.stowage.io');
      expect(drv.body.spec.attachRequired).toBe(false);
      const node = (await api(a.target, 'GET', '/api/v1/nodes/testnode')).body;
      expect(JSON.parse(node.metadata.annotations['csi.volume.kubernetes.io/nodeid'])).toEqual({ 'hostpath.csi.stowage.io': 'testnode' });
      await api(a.target, 'POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'keep' }, data: { k: 'v' } });
      // The controllers run in a worker thread; their metrics are served with the API server's.
      await expect.poll(async () => (await api(a.target, 'GET', '/metrics')).text, { timeout: 15_000 }).toContain('pv_collector_total_pv_count');
    } finally {
      a.child.kill('SIGTERM');
    }
    expect(await a.exit).toBe(0);
    expect(existsSync(join(dataDir, 'node', 'plugins_registry', 'hostpath.csi.stowage.io-reg.sock'))).toBe(false);
    const b = await up(dataDir);
    try {
      const cm = await api(b.target, 'GET', '/api/v1/namespaces/default/configmaps/keep');
      expect(cm.body.data).toEqual({ k: 'v' });
      expect(b.target.token).toBe(a.target.token);
    } finally {
      b.child.kill('SIGTERM');
    }
    expect(await b.exit).toBe(0);
  }, 60_000);

  it('refuses a port in use and an unusable data dir with a one-line error', async () => {
    const a = await up(tmp(), ['--no-node']);
    try {
      const port = new URL(a.target.baseUrl).port;
      const r = spawnSync(process.execPath, [BIN, 'up', '--port', port, '--data-dir', tmp(), '--no-node'], { encoding: 'utf8', timeout: 30_000 });
      expect(r.status).toBe(1);
      expect(r.stderr.trim()).toBe(`stowage: cannot listen on 127.0.0.1:${port}: address already in use`);
    } finally {
      a.child.kill('SIGTERM');
      await a.exit;
    }
    const file = join(tmp(), 'a-file');
    writeFileSync(file, '');
    const bad = spawnSync(process.execPath, [BIN, 'up', '--port', '0', '--data-dir', join(file, 'sub')], { encoding: 'utf8', timeout: 30_000 });
    expect(bad.status).toBe(1);
    expect(bad.stderr.trim()).toMatch(/^stowage: data dir .* is not writable: ENOTDIR$/);
    const badPort = spawnSync(process.execPath, [BIN, 'up', '--port', 'x'], { encoding: 'utf8', timeout: 30_000 });
    expect(badPort.stderr.trim()).toBe('stowage: invalid --port "x": must be 0-65535');
    const ctrl = spawnSync(process.execPath, [BIN, 'controllers', '--kubeconfig', join(file, 'missing')], { encoding: 'utf8', timeout: 30_000 });
    expect(ctrl.status).toBe(1);
    expect(ctrl.stderr.trim()).toMatch(/^stowage: cannot load kubeconfig .*missing: /);
    expect(ctrl.stderr.trim().split('\n')).toHaveLength(1);
    const workers = spawnSync(process.execPath, [BIN, 'controllers', '--kubeconfig', file, '--workers', '0'], { encoding: 'utf8', timeout: 30_000 });
    expect(workers.status).toBe(1);
    expect(workers.stderr.trim()).toBe('stowage: invalid --workers "0": must be a positive integer');
  }, 60_000);
});
