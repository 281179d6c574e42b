import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, ROOT, built, isRoot } from './helpers/env.js';
import { afterAll, describe, expect, it } from 'vitest';
import { api, type Target } from './helpers/http.js';

if (!built) console.warn('stowage up tests skipped: run `npm run build` first (npm test does)');

interface Running {
  child: ChildProcess;
  target: Target;
  exit: Promise<number | null>;
  /** What it printed on stdout up to "Stop with Ctrl-C." */
  banner: string;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
}

/** Starts `stowage up` in its own process group, as a shell starts a foreground job. */
async function up(dataDir: string, extra: string[] = []): Promise<Running> {
  const child = spawn(
    process.execPath,
    [BIN, 'up', '--port', '0', '--data-dir', dataDir, '--node-name', 'testnode', '--no-container-runtime', ...extra],
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const banner = await new Promise<string>((res, rej) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Stop with Ctrl-C.\n')) res(out);
    });
    void exit.then((code) => rej(new Error(`stowage up exited with ${code}: ${err}`)));
  });
  const url = /API server (https:\/\/\S+),/.exec(banner)![1]!;
  const kc = readFileSync(join(dataDir, 'kubeconfig'), 'utf8');
  const token = /token: (\S+)/.exec(kc)![1]!;
  const caPem = Buffer.from(/certificate-authority-data: (\S+)/.exec(kc)![1]!, 'base64').toString();
  return { child, exit, banner, stderr: () => err, target: { baseUrl: url, token, caPem } };
}

/** Ctrl-C in a terminal: SIGINT to the whole foreground process group (helpers included). */
function ctrlC(r: Running): void {
  process.kill(-r.child.pid!, 'SIGINT');
}

/** Lines of stderr that are not INFO/DEBUG log lines: warnings, errors, Node's own complaints. */
function complaints(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.trim() !== '' && !/^\S+ (INFO|DEBUG) \[/.test(l));
}

/** The banner README.md says `npm start` prints, from the indented block after that sentence. */
function readmeBanner(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const after = readme.slice(readme.indexOf('`npm start` prints where it runs'));
  const block = /\n\n((?: {4}.*\n)+)/.exec(after)![1]!;
  return block
    .split('\n')
    .map((l) => l.slice(4))
    .join('\n');
}

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

  it.skipIf(!isRoot)(
    'registers the built-in hostpath driver with its node, stops cleanly on SIGTERM, and restarts with its data',
    async () => {
      const dataDir = tmp();
      const a = await up(dataDir);
      try {
        await expect
          .poll(
            async () =>
              (await api(a.target, 'GET', '/apis/storage.k8s.io/v1/csinodes/testnode')).body?.spec?.drivers?.[0],
            { timeout: 15_000 },
          )
          .toMatchObject({
            name: 'hostpath.csi.stowage.io',
            nodeID: 'testnode',
            topologyKeys: ['topology.hostpath.csi.stowage.io/node'],
          });
        const drv = await api(a.target, 'GET', '/apis/storage.k8s.io/v1/csidrivers/hostpath.csi.stowage.io');
        expect(drv.body.spec.attachRequired).toBe(false);
        expect(drv.body.spec.volumeLifecycleModes).toEqual(['Persistent', 'Ephemeral']); // inline csi: volumes too
        const node = (await api(a.target, 'GET', '/api/v1/nodes/testnode')).body;
        expect(JSON.parse(node.metadata.annotations['csi.volume.kubernetes.io/nodeid'])).toEqual({
          'hostpath.csi.stowage.io': 'testnode',
        });
        await api(a.target, 'POST', '/api/v1/namespaces/default/configmaps', {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'keep' },
          data: { k: 'v' },
        });
        // The controllers run in a worker thread; their metrics are served with the API server's.
        await expect
          .poll(async () => (await api(a.target, 'GET', '/metrics')).text, { timeout: 15_000 })
          .toContain('pv_collector_total_pv_count');
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
        ctrlC(b);
      }
      expect(await b.exit).toBe(0);
      // Started and stopped as asked: no warning (listener leaks, helpers "exiting unexpectedly"), no error.
      expect(complaints(a.stderr())).toEqual([]);
      expect(complaints(b.stderr())).toEqual([]);
    },
    60_000,
  );

  it('prints what README.md says `npm start` prints', async () => {
    const dataDir = tmp();
    const r = await up(dataDir, ['--no-node']);
    try {
      const url = /API server (\S+),/.exec(r.banner)![1]!;
      const want = readmeBanner()
        .replaceAll('https://127.0.0.1:6443', url)
        .replaceAll('/home/me/stowage-data', dataDir)
        .replace(', node myhost', '');
      expect(r.banner).toBe(want);
    } finally {
      ctrlC(r);
    }
    expect(await r.exit).toBe(0);
    expect(complaints(r.stderr())).toEqual([]);
  }, 60_000);

  it('passes --node-monitor-grace-period/--node-monitor-period to its controllers, and serves the default/kubernetes Service', async () => {
    const r = await up(tmp(), ['--no-node', '--node-monitor-grace-period', '1s', '--node-monitor-period', '200ms']);
    try {
      // A node that posted Ready once and then fell silent: Unknown after 1 s here, 40 s by default.
      await api(r.target, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'silent' } });
      const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      const ready = {
        type: 'Ready',
        status: 'True',
        reason: 'KubeletReady',
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      };
      await api(
        r.target,
        'PATCH',
        '/api/v1/nodes/silent/status',
        { status: { conditions: [ready] } },
        { contentType: 'application/merge-patch+json' },
      );
      await expect
        .poll(
          async () =>
            (await api(r.target, 'GET', '/api/v1/nodes/silent')).body?.status?.conditions?.find(
              (c: { type: string }) => c.type === 'Ready',
            ),
          { timeout: 15_000 },
        )
        .toMatchObject({ status: 'Unknown', reason: 'NodeStatusUnknown' });
      await expect
        .poll(async () => (await api(r.target, 'GET', '/api/v1/namespaces/default/services/kubernetes')).body?.spec, {
          timeout: 15_000,
        })
        .toMatchObject({
          clusterIP: '10.96.0.1',
          ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: Number(new URL(r.target.baseUrl).port) }],
        });
    } finally {
      ctrlC(r);
    }
    expect(await r.exit).toBe(0);
    expect(complaints(r.stderr())).toEqual([]);
  }, 60_000);

  it('a start that fails leaves no half-made data dir: a new one is removed, an existing one stays as it was', async () => {
    const a = await up(tmp(), ['--no-node']);
    try {
      const port = new URL(a.target.baseUrl).port;
      const fresh = join(tmp(), 'new', 'data');
      const r = spawnSync(process.execPath, [BIN, 'up', '--port', port, '--data-dir', fresh, '--no-node'], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(r.status).toBe(1);
      expect(existsSync(join(fresh, '..'))).toBe(false);
      const existing = join(tmp(), 'existing');
      mkdirSync(existing);
      writeFileSync(join(existing, 'mine'), 'x');
      const again = spawnSync(process.execPath, [BIN, 'up', '--port', port, '--data-dir', existing, '--no-node'], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(again.status).toBe(1);
      expect(readdirSync(existing)).toEqual(['mine']);
      expect(readFileSync(join(existing, 'mine'), 'utf8')).toBe('x');
    } finally {
      ctrlC(a);
      await a.exit;
    }
    const badFlag = tmp();
    const bad = spawnSync(process.execPath, [BIN, 'up', '--port', 'x', '--data-dir', join(badFlag, 'data')], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(bad.status).toBe(1);
    expect(readdirSync(badFlag)).toEqual([]);
  }, 60_000);

  it('refuses a port in use and an unusable data dir with a one-line error', async () => {
    const a = await up(tmp(), ['--no-node']);
    try {
      const port = new URL(a.target.baseUrl).port;
      const r = spawnSync(process.execPath, [BIN, 'up', '--port', port, '--data-dir', tmp(), '--no-node'], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(r.status).toBe(1);
      expect(r.stderr.trim()).toBe(`stowage: cannot listen on 127.0.0.1:${port}: address already in use`);
    } finally {
      a.child.kill('SIGTERM');
      await a.exit;
    }
    const file = join(tmp(), 'a-file');
    writeFileSync(file, '');
    const bad = spawnSync(process.execPath, [BIN, 'up', '--port', '0', '--data-dir', join(file, 'sub')], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(bad.status).toBe(1);
    expect(bad.stderr.trim()).toMatch(/^stowage: data dir .* is not writable: ENOTDIR$/);
    const badPort = spawnSync(process.execPath, [BIN, 'up', '--port', 'x'], { encoding: 'utf8', timeout: 30_000 });
    expect(badPort.stderr.trim()).toBe('stowage: invalid --port "x": must be 0-65535');
    const ctrl = spawnSync(process.execPath, [BIN, 'controllers', '--kubeconfig', join(file, 'missing')], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(ctrl.status).toBe(1);
    expect(ctrl.stderr.trim()).toMatch(/^stowage: cannot load kubeconfig .*missing: /);
    expect(ctrl.stderr.trim().split('\n')).toHaveLength(1);
    const workers = spawnSync(process.execPath, [BIN, 'controllers', '--kubeconfig', file, '--workers', '0'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(workers.status).toBe(1);
    expect(workers.stderr.trim()).toBe('stowage: invalid --workers "0": must be a positive integer');
  }, 60_000);
});
