/**
 * What a pod spec asks of the kubelet beyond running a command, on the embedded containerd with the
 * busybox test image: probes (exec, httpGet, tcpSocket; startup, liveness, readiness), lifecycle
 * hooks, env from configMaps/secrets/fields/resources, subPathExpr, CreateContainerConfigError
 * and imagePullSecrets against a registry that demands credentials. One `stowage up` for all.
 */
import { createServer, request, type Server } from 'node:http';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freeLoopbackPort } from '../src/util/freeport.js';
import { built } from './helpers/env.js';
import { api, type Target } from './helpers/http.js';
import { runtimeTestsMissing } from './helpers/runtime.js';
import { startRuntimeCluster, type RuntimeCluster } from './helpers/runtime-up.js';

const missing = [...runtimeTestsMissing(), ...(built ? [] : ['a build (npm test builds)'])];
if (missing.length > 0)
  console.warn(`pod spec runtime tests skipped: missing ${missing.join(', ')} (.ci/run installs the packages)`);

const NODE = 'specnode';
const NS = '/api/v1/namespaces/default';
const USER = 'puller';
const PASSWORD = 'pull-pw';

/** A Basic-auth gate in front of the registry: the registry as one that demands credentials. */
async function authProxy(upstream: string): Promise<{ host: string; server: Server }> {
  const port = await freeLoopbackPort();
  const want = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
  const server = createServer((req, res) => {
    if (req.headers.authorization !== want) {
      res
        .writeHead(401, {
          'WWW-Authenticate': 'Basic realm="stowage-test"',
          'Docker-Distribution-API-Version': 'registry/2.0',
        })
        .end();
      return;
    }
    const [h, p] = upstream.split(':');
    const up = request(
      { host: h, port: Number(p), path: req.url, method: req.method, headers: { ...req.headers, host: upstream } },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    up.on('error', () => res.writeHead(502).end());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return { host: `127.0.0.1:${port}`, server };
}

describe.skipIf(missing.length > 0)('pod spec on the embedded containerd', () => {
  let c: RuntimeCluster | undefined;
  let proxy: { host: string; server: Server } | undefined;
  let t: Target;
  let image: string;
  let hostDir: string;

  beforeAll(async () => {
    c = await startRuntimeCluster('stowage-podspec-', NODE);
    ({ t, image } = c);
    hostDir = join(c.dir, 'host');
    mkdirSync(hostDir);
    proxy = await authProxy(c.registry.host);
  }, 180_000);

  afterAll(async () => {
    proxy?.server.close();
    await c?.stop();
  }, 240_000);

  /** Creates a pod of one busybox container `c` running `script`; `c` and `spec` extend the container and the pod spec. */
  const pod = async (
    name: string,
    script: string,
    o: { c?: Record<string, unknown>; spec?: Record<string, unknown>; containers?: unknown[] } = {},
  ): Promise<void> => {
    const body = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: {
        nodeName: NODE,
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'c', image, command: ['sh', '-c', script], ...o.c }, ...(o.containers ?? [])],
        ...o.spec,
      },
    };
    const r = await api(t, 'POST', `${NS}/pods`, body);
    expect(r.status, r.text).toBe(201);
  };
  const claim = (name: string): Promise<void> => c!.claim(name);
  const status = async (name: string): Promise<any> => (await api(t, 'GET', `${NS}/pods/${name}`)).body?.status;
  const container = async (name: string, c = 'c'): Promise<any> =>
    (await status(name))?.containerStatuses?.find((s: { name: string }) => s.name === c);
  const condition = async (name: string, type: string): Promise<string | undefined> =>
    (await status(name))?.conditions?.find((c: { type: string }) => c.type === type)?.status;
  const events = async (name: string): Promise<Array<{ reason: string; message: string }>> =>
    (await api(t, 'GET', `${NS}/events?fieldSelector=involvedObject.name=${name}`)).body?.items ?? [];
  const probeVolume = (sub: string) => ({
    c: { volumeMounts: [{ name: 'probe', mountPath: '/probe' }] },
    volumes: [{ name: 'probe', hostPath: { path: join(hostDir, sub), type: 'DirectoryOrCreate' } }],
  });

  it('a failing liveness probe restarts the container (Unhealthy, then Killing with the kubelet message)', async () => {
    await pod('live', 'touch /tmp/healthy; sleep 2; rm /tmp/healthy; sleep 600', {
      c: {
        livenessProbe: { exec: { command: ['test', '-e', '/tmp/healthy'] }, periodSeconds: 1, failureThreshold: 1 },
      },
      spec: { restartPolicy: 'Always' },
    });
    await expect
      .poll(async () => (await container('live'))?.restartCount, { timeout: 90_000 })
      .toBeGreaterThanOrEqual(1);
    expect((await container('live')).lastState.terminated).toBeDefined();
    const ev = await events('live');
    expect(ev.find((e) => e.reason === 'Unhealthy')?.message).toMatch(/^Liveness probe failed: /);
    expect(ev.filter((e) => e.reason === 'Killing').map((e) => e.message)).toContain(
      'Container c failed liveness probe, will be restarted',
    );
  }, 120_000);

  it('a startup probe gates readiness; the readiness probe flips container ready and the Ready/ContainersReady conditions', async () => {
    const v = probeVolume('gated');
    await pod('gated', 'sleep 600', {
      c: {
        ...v.c,
        startupProbe: { exec: { command: ['test', '-e', '/probe/started'] }, periodSeconds: 1, failureThreshold: 300 },
        readinessProbe: { exec: { command: ['test', '-e', '/probe/ready'] }, periodSeconds: 1 },
      },
      spec: { volumes: v.volumes },
    });
    await expect.poll(async () => (await container('gated'))?.state?.running, { timeout: 90_000 }).toBeDefined();
    expect(await container('gated')).toMatchObject({ started: false, ready: false });
    expect(await condition('gated', 'Ready')).toBe('False');
    writeFileSync(join(hostDir, 'gated', 'ready'), ''); // readiness would pass, but the startup probe has not
    writeFileSync(join(hostDir, 'gated', 'started'), '');
    await expect.poll(async () => (await container('gated'))?.started, { timeout: 30_000 }).toBe(true);
    await expect
      .poll(
        async () => [
          (await container('gated'))?.ready,
          await condition('gated', 'ContainersReady'),
          await condition('gated', 'Ready'),
        ],
        { timeout: 30_000 },
      )
      .toEqual([true, 'True', 'True']);
    rmSync(join(hostDir, 'gated', 'ready'));
    await expect
      .poll(async () => [(await container('gated'))?.ready, await condition('gated', 'Ready')], { timeout: 30_000 })
      .toEqual([false, 'False']);
    expect((await container('gated')).restartCount).toBe(0);
  }, 150_000);

  it('httpGet and tcpSocket probes reach the container on the node address', async () => {
    const [p1, p2] = [await freeLoopbackPort(), await freeLoopbackPort()];
    const serve = (port: number) => `mkdir -p /www && echo ok > /www/index.html && exec httpd -f -p ${port} -h /www`;
    await pod('web', serve(p1), {
      c: {
        ports: [{ name: 'http', containerPort: p1 }],
        readinessProbe: { httpGet: { path: '/index.html', port: 'http' }, periodSeconds: 1 },
        livenessProbe: { tcpSocket: { port: p1 }, periodSeconds: 1, failureThreshold: 1 },
      },
      containers: [
        {
          name: 'notfound',
          image,
          command: ['sh', '-c', serve(p2)],
          readinessProbe: { httpGet: { path: '/missing', port: p2 }, periodSeconds: 1 },
        },
      ],
    });
    await expect.poll(async () => (await container('web'))?.ready, { timeout: 90_000 }).toBe(true);
    await expect
      .poll(async () => (await events('web')).map((e) => e.message), { timeout: 30_000 })
      .toContain('Readiness probe failed: HTTP probe failed with statuscode: 404');
    expect(await container('web', 'notfound')).toMatchObject({ ready: false, state: { running: {} } });
    expect(await condition('web', 'Ready')).toBe('False');
    expect((await container('web')).restartCount).toBe(0);
  }, 120_000);

  it('postStart runs after the start; preStop runs before SIGTERM and writes to the volume before it is unmounted', async () => {
    await claim('hooks');
    await pod('hooked', 'trap "exit 0" TERM; while true; do sleep 0.1; done', {
      c: {
        volumeMounts: [{ name: 'data', mountPath: '/data' }],
        lifecycle: {
          postStart: { exec: { command: ['sh', '-c', 'echo post > /data/post'] } },
          preStop: { exec: { command: ['sh', '-c', 'echo "prestop after $(cat /data/post)" > /data/prestop; sync'] } },
        },
      },
      spec: {
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 30,
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'hooks' } }],
      },
    });
    await expect.poll(async () => (await container('hooked'))?.state?.running, { timeout: 90_000 }).toBeDefined();
    expect((await api(t, 'DELETE', `${NS}/pods/hooked`)).status).toBe(200);
    await expect.poll(async () => (await api(t, 'GET', `${NS}/pods/hooked`)).status, { timeout: 90_000 }).toBe(404);
    await pod('hook-reader', 'test "$(cat /data/prestop)" = "prestop after post"', {
      c: { volumeMounts: [{ name: 'data', mountPath: '/data' }] },
      spec: { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'hooks' } }] },
    });
    await expect.poll(async () => (await status('hook-reader'))?.phase, { timeout: 90_000 }).toBe('Succeeded');
  }, 200_000);

  it('a failing postStart hook kills the container (FailedPostStartHook)', async () => {
    await pod('badhook', 'sleep 600', {
      c: { lifecycle: { postStart: { exec: { command: ['sh', '-c', 'echo nope; exit 3'] } } } },
    });
    await expect.poll(async () => (await container('badhook'))?.state?.terminated, { timeout: 90_000 }).toBeDefined();
    const failed = (await events('badhook')).find((e) => e.reason === 'FailedPostStartHook');
    expect(failed?.message).toMatch(
      /^Exec lifecycle hook \(\[sh -c echo nope; exit 3\]\) for Container "c" in Pod "badhook_default\(.+\)" failed - error: .*message: "nope\\n"$/,
    );
    await expect.poll(async () => (await status('badhook'))?.phase, { timeout: 30_000 }).toBe('Failed');
  }, 120_000);

  it('env: envFrom with prefix, secretRef, resourceFieldRef with divisor, fieldRefs; subPathExpr and workingDir', async () => {
    expect(
      (
        await api(t, 'POST', `${NS}/configmaps`, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'envcm' },
          data: { greeting: 'hello' },
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await api(t, 'POST', `${NS}/secrets`, {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'envsec' },
          data: { token: Buffer.from('s3cret').toString('base64') },
        })
      ).status,
    ).toBe(201);
    await pod('envpod', 'env > env.txt && pwd > pwd.txt', {
      c: {
        workingDir: '/out',
        resources: { limits: { memory: '64Mi', cpu: '250m' } },
        envFrom: [
          { configMapRef: { name: 'envcm' }, prefix: 'CM_' },
          { secretRef: { name: 'envsec' } },
          { configMapRef: { name: 'absent', optional: true } },
        ],
        env: [
          { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'IPS', valueFrom: { fieldRef: { fieldPath: 'status.podIPs' } } },
          { name: 'MEM_MI', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
          { name: 'CPU_M', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1m' } } },
          { name: 'SAY', value: '$(CM_greeting) $(POD)' },
        ],
        volumeMounts: [{ name: 'out', mountPath: '/out', subPathExpr: 'pods/$(POD)' }],
      },
      spec: { volumes: [{ name: 'out', hostPath: { path: join(hostDir, 'env'), type: 'DirectoryOrCreate' } }] },
    });
    await expect.poll(async () => (await status('envpod'))?.phase, { timeout: 90_000 }).toBe('Succeeded');
    const hostIP = (await status('envpod')).hostIP as string;
    const env = readFileSync(join(hostDir, 'env', 'pods', 'envpod', 'env.txt'), 'utf8').split('\n');
    expect(env).toEqual(
      expect.arrayContaining([
        'CM_greeting=hello',
        'token=s3cret',
        'POD=envpod',
        `IPS=${hostIP}`,
        'MEM_MI=64',
        'CPU_M=250',
        'SAY=hello envpod',
      ]),
    );
    expect(readFileSync(join(hostDir, 'env', 'pods', 'envpod', 'pwd.txt'), 'utf8').trim()).toBe('/out');
  }, 120_000);

  it('configMap, secret, downwardAPI and projected volumes are read-only in the container; emptyDir is not', async () => {
    const r = await api(t, 'POST', `${NS}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'rocm' },
      data: { k: 'v' },
    });
    expect(r.status, r.text).toBe(201);
    const dirs = ['cm', 'sec', 'down', 'proj', 'scratch'];
    const script = dirs
      .map((d) => `if touch /${d}/new 2>/dev/null; then echo ${d}=rw; else echo ${d}=ro; fi`)
      .join('; ');
    await pod('ropod', `(${script}) > /out/ro.txt`, {
      c: {
        volumeMounts: [...dirs.map((d) => ({ name: d, mountPath: `/${d}` })), { name: 'out', mountPath: '/out' }],
      },
      spec: {
        volumes: [
          { name: 'cm', configMap: { name: 'rocm' } },
          { name: 'sec', secret: { secretName: 'envsec', optional: true } },
          { name: 'down', downwardAPI: { items: [{ path: 'name', fieldRef: { fieldPath: 'metadata.name' } }] } },
          { name: 'proj', projected: { sources: [{ configMap: { name: 'rocm' } }] } },
          { name: 'scratch', emptyDir: {} },
          { name: 'out', hostPath: { path: join(hostDir, 'ro'), type: 'DirectoryOrCreate' } },
        ],
      },
    });
    await expect.poll(async () => (await status('ropod'))?.phase, { timeout: 90_000 }).toBe('Succeeded');
    expect(
      readFileSync(join(hostDir, 'ro', 'ro.txt'), 'utf8')
        .trim()
        .split('\n'),
    ).toEqual(['cm=ro', 'sec=ro', 'down=ro', 'proj=ro', 'scratch=rw']);
  }, 120_000);

  it('a block claim reaches the container as a device at its devicePath', async () => {
    const pvc = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'raw' },
      spec: {
        accessModes: ['ReadWriteOnce'],
        volumeMode: 'Block',
        storageClassName: 'fast',
        resources: { requests: { storage: '1Mi' } },
      },
    };
    expect((await api(t, 'POST', `${NS}/persistentvolumeclaims`, pvc)).status).toBe(201);
    await pod('blockpod', 'test -b /dev/xraw', {
      c: { volumeDevices: [{ name: 'raw', devicePath: '/dev/xraw' }] },
      spec: { volumes: [{ name: 'raw', persistentVolumeClaim: { claimName: 'raw' } }] },
    });
    await expect.poll(async () => (await status('blockpod'))?.phase, { timeout: 90_000 }).toBe('Succeeded');
  }, 120_000);

  it("runAsUser with fsGroup and supplementalGroups: the process has the groups, the emptyDir is the fsGroup's to write", async () => {
    const script =
      'id -u | grep -qx 1000 && id -G | grep -qw 2345 && id -G | grep -qw 3456 && touch /scratch/f && ls -ln /scratch/f | grep -q " 1000 *2345 "';
    await pod('grouped', script, {
      c: { volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] },
      spec: {
        securityContext: { runAsUser: 1000, fsGroup: 2345, supplementalGroups: [3456] },
        volumes: [{ name: 'scratch', emptyDir: {} }],
      },
    });
    await expect.poll(async () => (await status('grouped'))?.phase, { timeout: 90_000 }).toBe('Succeeded');
  }, 120_000);

  it('a missing configMap is CreateContainerConfigError with the kubelet message, until it exists', async () => {
    await pod('needs-config', 'test "$K" = v', {
      c: { env: [{ name: 'K', valueFrom: { configMapKeyRef: { name: 'later', key: 'k' } } }] },
    });
    await expect
      .poll(async () => (await container('needs-config'))?.state?.waiting, { timeout: 90_000 })
      .toEqual({ reason: 'CreateContainerConfigError', message: 'configmap "later" not found' });
    expect(
      (
        await api(t, 'POST', `${NS}/configmaps`, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'later' },
          data: { other: 'x' },
        })
      ).status,
    ).toBe(201);
    await expect
      .poll(async () => (await container('needs-config'))?.state?.waiting?.message, { timeout: 60_000 })
      .toBe("couldn't find key k in ConfigMap default/later");
    expect(
      (
        await api(
          t,
          'PATCH',
          `${NS}/configmaps/later`,
          { data: { k: 'v' } },
          { contentType: 'application/merge-patch+json' },
        )
      ).status,
    ).toBe(200);
    await expect.poll(async () => (await status('needs-config'))?.phase, { timeout: 60_000 }).toBe('Succeeded');
  }, 200_000);

  it('imagePullSecrets: a registry demanding credentials refuses an anonymous pull and serves one with the dockerconfigjson secret', async () => {
    const privateImage = `${proxy!.host}/busybox:t1`;
    await pod('anonymous', 'true', { c: { image: privateImage } });
    await expect
      .poll(async () => (await container('anonymous'))?.state?.waiting?.reason, { timeout: 90_000 })
      .toMatch(/^(ErrImagePull|ImagePullBackOff)$/);
    const auths = {
      [proxy!.host]: {
        username: USER,
        password: PASSWORD,
        auth: Buffer.from(`${USER}:${PASSWORD}`).toString('base64'),
      },
    };
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'pull' },
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': Buffer.from(JSON.stringify({ auths })).toString('base64') },
    };
    expect((await api(t, 'POST', `${NS}/secrets`, secret)).status).toBe(201);
    await pod('authenticated', 'true', { c: { image: privateImage }, spec: { imagePullSecrets: [{ name: 'pull' }] } });
    await expect.poll(async () => (await status('authenticated'))?.phase, { timeout: 90_000 }).toBe('Succeeded');
  }, 200_000);
});
