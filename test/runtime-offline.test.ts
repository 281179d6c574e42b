/**
 * Pods on a machine with no internet (issue 24 item 1), on the embedded containerd of `stowage up`
 * with its default sandbox image: the shipped pause image is imported at start; an image archive
 * left in `<data-dir>/agent/images/` and one given to `stowage images import` run as pods with no
 * registry; a registry named through `<data-dir>/containerd/certs.d/<host>/hosts.toml` is reached
 * over plain HTTP on loopback; and a sandbox that cannot be created reads as on a cluster
 * (FailedCreatePodSandBox, ContainerCreating, PodReadyToStartContainers False).
 */
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { built, hasKubectl, ROOT } from './helpers/env.js';
import { kubectlIn } from './helpers/kubectl.js';
import { api, type Target } from './helpers/http.js';
import {
  buildBusyboxArchive,
  runtimeTestsMissing,
  startRegistry,
  tearDownRuntimeUp,
  type Registry,
} from './helpers/runtime.js';
import { startUp, type RunningUp } from './helpers/up.js';

const run = promisify(execFile);
const missing = [...runtimeTestsMissing(), ...(built ? [] : ['a build (npm test builds)'])];
if (missing.length > 0) console.warn(`offline image tests skipped: missing ${missing.join(', ')}`);

const NODE = 'offline';
const NS = '/api/v1/namespaces/default';

describe.skipIf(missing.length > 0)('pods with no internet', () => {
  let dir = '';
  let dataDir = '';
  let up: RunningUp | undefined;
  let registry: Registry | undefined;
  let t: Target;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'stowage-offline-'));
    dataDir = join(dir, 'data');
    // Before the first start: an archive in agent/images, and a hosts.toml naming a loopback registry.
    mkdirSync(join(dataDir, 'agent', 'images'), { recursive: true });
    await buildBusyboxArchive(join(dir, 'boot'), ['sh', '-c', 'sleep 3600'], 'localhost/busybox:boot');
    await run('cp', [join(dir, 'boot', 'image.tar'), join(dataDir, 'agent', 'images', 'busybox.tar')]);
    registry = await startRegistry(join(dir, 'registry'));
    await registry.push('busybox', 'mirrored', ['sh', '-c', 'sleep 3600']);
    const hosts = join(dataDir, 'containerd', 'certs.d', 'registry.example.invalid');
    mkdirSync(hosts, { recursive: true });
    writeFileSync(
      join(hosts, 'hosts.toml'),
      `server = "http://${registry.host}"\n[host."http://${registry.host}"]\n  capabilities = ["pull", "resolve"]\n`,
    );
    up = await startUp(
      dataDir,
      NODE,
      ['--no-hostpath', '--container-log-max-size', '4Ki', '--container-log-max-files', '3'],
      { runtime: true, stderr: 'inherit' },
    );
    t = up.target;
  }, 180_000);
  afterAll(async () => {
    await tearDownRuntimeUp({ up, dir, registry });
  }, 240_000);

  const pod = async (name: string, image: string, command?: string[]): Promise<void> => {
    const r = await api(t, 'POST', `${NS}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: {
        nodeName: NODE,
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'c', image, imagePullPolicy: 'IfNotPresent', ...(command ? { command } : {}) }],
      },
    });
    expect(r.status, r.text).toBe(201);
  };
  const status = async (name: string): Promise<any> => (await api(t, 'GET', `${NS}/pods/${name}`)).body?.status;
  const running = (name: string): Promise<void> =>
    expect.poll(async () => (await status(name))?.phase, { timeout: 90_000 }).toBe('Running');

  it('the shipped sandbox image and an archive from agent/images run a pod with no registry', async () => {
    await pod('boot', 'localhost/busybox:boot');
    await running('boot');
  }, 120_000);

  it.skipIf(!hasKubectl)(
    "README's minimal busybox example: an archive made from files, `stowage images import`, kubectl run",
    async () => {
      const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
      const script = /The minimal busybox example[^\n]*\n```sh\n([\s\S]*?)```/.exec(readme)?.[1];
      expect(script, 'the example block in README.md').toBeDefined();
      const work = join(dir, 'readme');
      mkdirSync(join(work, 'bin'), { recursive: true });
      writeFileSync(
        join(work, 'bin', 'stowage'),
        `#!/bin/sh\nexec ${process.execPath} ${join(ROOT, 'dist', 'src', 'cli', 'main.js')} "$@"\n`,
        { mode: 0o755 },
      );
      symlinkSync(dataDir, join(work, 'stowage-data'));
      const { env } = kubectlIn(() => dataDir);
      const { stdout } = await run('bash', ['-e', '-c', script!], {
        cwd: work,
        env: { ...env(), PATH: `${join(work, 'bin')}:${process.env.PATH ?? ''}` },
        timeout: 120_000,
      });
      expect(stdout).toContain('localhost/busybox:1');
      await running('bb');
    },
    150_000,
  );

  it('a registry host mapped to a loopback registry in certs.d/<host>/hosts.toml is pulled from over plain HTTP', async () => {
    await pod('mirrored', 'registry.example.invalid/busybox:mirrored');
    await running('mirrored');
  }, 120_000);

  it.skipIf(!hasKubectl)(
    'container logs rotate at --container-log-max-size keeping --container-log-max-files; kubectl logs -f reads across',
    async () => {
      await pod('chatty', 'localhost/busybox:boot', [
        'sh',
        '-c',
        'i=0; while true; do echo n$i; i=$((i+1)); sleep 0.05; done',
      ]);
      await running('chatty');
      const uid = (await api(t, 'GET', `${NS}/pods/chatty`)).body.metadata.uid as string;
      const logDir = join(dataDir, 'node', 'logs', 'pods', `default_chatty_${uid}`, 'c');
      const { env } = kubectlIn(() => dataDir);
      const follow = spawn('kubectl', ['logs', '-f', 'chatty'], { env: env(), stdio: ['ignore', 'pipe', 'ignore'] });
      let out = '';
      follow.stdout.on('data', (b: Buffer) => (out += b.toString()));
      try {
        // Two rotations: the older rotated file is then compressed.
        await expect
          .poll(() => readdirSync(logDir).filter((n) => n.endsWith('.gz')).length, { timeout: 90_000, interval: 500 })
          .toBeGreaterThan(0);
        const files = readdirSync(logDir);
        expect(files.length).toBeLessThanOrEqual(3);
        expect(files).toContain('0.log');
        const after = out.split('\n').length;
        await expect.poll(() => out.split('\n').length, { timeout: 30_000 }).toBeGreaterThan(after + 20);
      } finally {
        follow.kill('SIGTERM');
      }
      const numbers = out
        .trim()
        .split('\n')
        .map((l) => Number(l.slice(1)));
      expect(numbers[0]).toBe(0);
      expect(numbers).toEqual(numbers.map((_, i) => i)); // no line lost or repeated across the rotations
    },
    150_000,
  );

  it('a sandbox that cannot be created: FailedCreatePodSandBox, ContainerCreating, PodReadyToStartContainers False', async () => {
    // The sandbox image gone from the runtime: containerd tries to pull it (localhost only) and fails.
    await run('ctr', [
      '--address',
      join(dataDir, 'containerd', 'containerd.sock'),
      '-n',
      'k8s.io',
      'images',
      'rm',
      'localhost/stowage/pause:1',
    ]);
    await pod('nosandbox', 'localhost/busybox:boot');
    await expect
      .poll(
        async () =>
          ((await api(t, 'GET', `${NS}/events?fieldSelector=involvedObject.name=nosandbox`)).body?.items ?? []).find(
            (e: { reason: string }) => e.reason === 'FailedCreatePodSandBox',
          ),
        { timeout: 90_000 },
      )
      .toMatchObject({
        type: 'Warning',
        message: expect.stringMatching(/^Failed to create pod sandbox: rpc error: code = \w+ desc = /),
      });
    await expect
      .poll(async () => (await status('nosandbox'))?.containerStatuses?.[0]?.state?.waiting?.reason, {
        timeout: 30_000,
      })
      .toBe('ContainerCreating');
    const s = await status('nosandbox');
    expect(s.phase).toBe('Pending');
    expect(s.conditions.find((c: { type: string }) => c.type === 'PodReadyToStartContainers')?.status).toBe('False');
  }, 120_000);
});
