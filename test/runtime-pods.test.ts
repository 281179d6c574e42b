/**
 * Pods that run: `stowage up` with its embedded containerd and the built-in hostpath driver, a
 * busybox image built by the test and pulled from a loopback registry. A pod writes to its claim,
 * a second pod reads it; restart policy and crash-loop backoff; termination in the kubelet's order
 * (the container gets SIGTERM while its volume is still mounted).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { built } from './helpers/env.js';
import { api, type Target } from './helpers/http.js';
import { runtimeTestsMissing, type Registry } from './helpers/runtime.js';
import { startRuntimeCluster, type RuntimeCluster } from './helpers/runtime-up.js';

const missing = [...runtimeTestsMissing(), ...(built ? [] : ['a build (npm test builds)'])];
if (missing.length > 0)
  console.warn(`pod runtime tests skipped: missing ${missing.join(', ')} (.ci/run installs the packages)`);

const NODE = 'podnode';
const NS = '/api/v1/namespaces/default';

describe.skipIf(missing.length > 0)('pods on the embedded containerd', () => {
  let c: RuntimeCluster | undefined;
  let t: Target;
  let image: string;
  let registry: Registry | undefined;

  beforeAll(async () => {
    c = await startRuntimeCluster('stowage-pods-', NODE);
    ({ t, image, registry } = c);
  }, 180_000);

  afterAll(async () => {
    await c?.stop();
  }, 240_000);

  const claim = (name: string): Promise<void> => c!.claim(name);
  const pod = async (
    name: string,
    script: string,
    o: {
      claim?: string;
      restartPolicy?: string;
      grace?: number;
      image?: string;
      init?: string[];
      env?: unknown[];
    } = {},
  ): Promise<void> => {
    const mounts = o.claim ? { volumeMounts: [{ name: 'data', mountPath: '/data' }] } : {};
    const body = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: {
        nodeName: NODE,
        restartPolicy: o.restartPolicy ?? 'Never',
        ...(o.grace !== undefined ? { terminationGracePeriodSeconds: o.grace } : {}),
        ...(o.init
          ? {
              initContainers: o.init.map((sh, i) => ({
                name: `init${i}`,
                image,
                command: ['sh', '-c', sh],
                ...mounts,
              })),
            }
          : {}),
        containers: [
          {
            name: 'c',
            image: o.image ?? image,
            command: ['sh', '-c', script],
            env: [{ name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }, ...(o.env ?? [])],
            ...mounts,
          },
        ],
        ...(o.claim ? { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: o.claim } }] } : {}),
      },
    };
    const r = await api(t, 'POST', `${NS}/pods`, body);
    expect(r.status, r.text).toBe(201);
  };
  const status = async (name: string): Promise<any> => (await api(t, 'GET', `${NS}/pods/${name}`)).body?.status;

  it('a pod writes to its claim; a second pod reads what it wrote', async () => {
    await claim('shared');
    await pod('writer', 'echo "written by $POD" > /data/msg && sync', { claim: 'shared' });
    await expect.poll(async () => (await status('writer'))?.phase, { timeout: 90_000 }).toBe('Succeeded');
    const w = await status('writer');
    expect(w.containerStatuses[0]).toMatchObject({
      name: 'c',
      restartCount: 0,
      state: { terminated: { exitCode: 0, reason: 'Completed' } },
    });
    expect(w.podIP).toBe(w.hostIP);
    await pod('reader', 'test "$(cat /data/msg)" = "written by writer"', { claim: 'shared' });
    await expect.poll(async () => (await status('reader'))?.phase, { timeout: 90_000 }).toBe('Succeeded');
  }, 200_000);

  it('restartPolicy Always: a crashing container is restarted and backs off (CrashLoopBackOff)', async () => {
    await pod('crasher', 'exit 3', { restartPolicy: 'Always' });
    await expect
      .poll(async () => (await status('crasher'))?.containerStatuses?.[0], { timeout: 90_000 })
      .toMatchObject({
        restartCount: 1,
        state: { waiting: { reason: 'CrashLoopBackOff' } },
        lastState: { terminated: { exitCode: 3, reason: 'Error' } },
      });
    expect((await status('crasher')).phase).toBe('Running');
  }, 120_000);

  it('termination: the container gets SIGTERM while its volume is still mounted; only then is the volume unmounted', async () => {
    await claim('term');
    await pod(
      'stopper',
      'trap "echo got-sigterm > /data/term; sync; exit 0" TERM; echo up > /data/up; while true; do sleep 0.1; done',
      { claim: 'term', grace: 30, restartPolicy: 'Always' },
    );
    // Running is not enough: the shell must have set its trap, which it reports by writing /data/up.
    await expect
      .poll(
        async () => {
          const paths = (await api(t, 'GET', `${NS}/pods/stopper`)).body?.metadata?.annotations?.[
            'volumes.stowage.io/host-paths'
          ];
          const data = paths ? (JSON.parse(paths) as Record<string, string>)['data'] : undefined;
          return data !== undefined && existsSync(join(data, 'up'));
        },
        { timeout: 90_000 },
      )
      .toBe(true);
    expect((await api(t, 'DELETE', `${NS}/pods/stopper`)).status).toBe(200);
    await expect.poll(async () => (await api(t, 'GET', `${NS}/pods/stopper`)).status, { timeout: 90_000 }).toBe(404);
    await pod('checker', 'test "$(cat /data/term)" = "got-sigterm"', { claim: 'term' });
    await expect.poll(async () => (await status('checker'))?.phase, { timeout: 90_000 }).toBe('Succeeded');
  }, 200_000);

  it('init containers run in order, to completion, before the container; env from a configMap key', async () => {
    await claim('ordered');
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { word: 'configured' } };
    expect((await api(t, 'POST', `${NS}/configmaps`, cm)).status).toBe(201);
    await pod(
      'inits',
      'echo "main $WORD" >> /data/order && test "$(cat /data/order)" = "$(printf \'first\\nsecond\\nmain configured\')"',
      {
        claim: 'ordered',
        init: ['echo first > /data/order', 'echo second >> /data/order'],
        env: [{ name: 'WORD', valueFrom: { configMapKeyRef: { name: 'settings', key: 'word' } } }],
      },
    );
    await expect.poll(async () => (await status('inits'))?.phase, { timeout: 90_000 }).toBe('Succeeded');
    const s = await status('inits');
    expect(
      s.initContainerStatuses.map((c: { name: string; state: { terminated?: { reason: string } } }) => [
        c.name,
        c.state.terminated?.reason,
      ]),
    ).toEqual([
      ['init0', 'Completed'],
      ['init1', 'Completed'],
    ]);
  }, 120_000);

  it('an image that cannot be pulled (missing tag, unreachable registry): ErrImagePull then ImagePullBackOff, events, and the node goes on', async () => {
    await pod('missing-tag', 'true', { image: `${registry!.host}/busybox:no-such-tag` });
    await pod('no-registry', 'true', { image: '127.0.0.1:1/busybox:t1' });
    for (const name of ['missing-tag', 'no-registry']) {
      await expect
        .poll(async () => (await status(name))?.containerStatuses?.[0]?.state?.waiting?.reason, { timeout: 90_000 })
        .toMatch(/^(ErrImagePull|ImagePullBackOff)$/);
      expect((await status(name)).phase).toBe('Pending');
      await expect
        .poll(
          async () =>
            ((await api(t, 'GET', `${NS}/events?fieldSelector=involvedObject.name=${name}`)).body?.items ?? []).map(
              (e: { reason: string }) => e.reason,
            ),
          { timeout: 30_000 },
        )
        .toContain('Failed');
    }
    await pod('after-failures', 'true');
    await expect.poll(async () => (await status('after-failures'))?.phase, { timeout: 90_000 }).toBe('Succeeded');
  }, 200_000);

  it('SIGKILL of stowage while a pod runs: restarted on the same data dir, it adopts containerd and the pod; nothing restarts, nothing unmounts', async () => {
    await claim('durable');
    await pod('survivor', 'echo up > /data/up; while true; do sleep 1; done', {
      claim: 'durable',
      restartPolicy: 'Always',
    });
    await expect
      .poll(async () => (await status('survivor'))?.containerStatuses?.[0]?.state?.running, { timeout: 90_000 })
      .toBeDefined();
    const before = (await status('survivor')).containerStatuses[0].containerID;
    await c!.restart();
    t = c!.t;
    // A pod started after the restart running is the sign the restarted agent has synced its pods.
    await pod('after-restart', 'true');
    await expect.poll(async () => (await status('after-restart'))?.phase, { timeout: 90_000 }).toBe('Succeeded');
    const after = (await status('survivor')).containerStatuses[0];
    expect(after).toMatchObject({ containerID: before, restartCount: 0, state: { running: {} } });
    await pod('reader-after-restart', 'test "$(cat /data/up)" = up', { claim: 'durable' });
    await expect.poll(async () => (await status('reader-after-restart'))?.phase, { timeout: 90_000 }).toBe('Succeeded');
  }, 240_000);
});
