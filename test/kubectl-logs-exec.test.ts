/**
 * `kubectl logs`, `exec` and `cp` against `stowage up` with its embedded containerd: the API server
 * reaches the node's HTTPS endpoint, which reads CRI log files and joins exec streams to
 * containerd's streaming server. Ends with the documentation task "Configure a Pod to Use a
 * PersistentVolume for Storage" (hostPath PV and claim; the file written on the host read back
 * through `kubectl exec … cat`).
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { built, hasKubectl } from './helpers/env.js';
import { api, type Target } from './helpers/http.js';
import { runtimeTestsMissing } from './helpers/runtime.js';
import { startRuntimeCluster, type RuntimeCluster } from './helpers/runtime-up.js';
import { until } from './volumemanager-kit.js';
import { encodeFrame, OPCODE, WsDecoder } from '../src/util/websocket.js';

const missing = [
  ...runtimeTestsMissing(),
  ...(built ? [] : ['a build (npm test builds)']),
  ...(hasKubectl ? [] : ['kubectl']),
];
if (missing.length > 0)
  console.warn(`kubectl logs/exec/cp tests skipped: missing ${missing.join(', ')} (.ci/run installs the packages)`);

const NODE = 'lognode';
const NS = '/api/v1/namespaces/default';

describe.skipIf(missing.length > 0)('kubectl logs, exec and cp on pods that run', () => {
  let c: RuntimeCluster | undefined;
  let dir: string;
  let t: Target;
  let image: string;

  const kubectl = (
    args: readonly string[],
    input?: string,
    env: NodeJS.ProcessEnv = {},
  ): Promise<{ stdout: string; stderr: string; code: number }> =>
    new Promise((resolve) => {
      const child = execFile(
        'kubectl',
        ['--kubeconfig', c!.up.kubeconfigPath, ...args],
        { timeout: 60_000, env: { ...process.env, ...env } },
        (err, stdout, stderr) =>
          resolve({ stdout, stderr, code: err ? (typeof err.code === 'number' ? err.code : 1) : 0 }),
      );
      if (input !== undefined) child.stdin!.end(input);
    });

  const pod = async (
    name: string,
    containers: Array<{ name: string; script: string }>,
    o: { restartPolicy?: string; volumes?: unknown[]; mounts?: unknown[] } = {},
  ): Promise<void> => {
    const body = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: {
        nodeName: NODE,
        restartPolicy: o.restartPolicy ?? 'Always',
        terminationGracePeriodSeconds: 1,
        containers: containers.map((c) => ({
          name: c.name,
          image,
          command: ['sh', '-c', c.script],
          ...(o.mounts ? { volumeMounts: o.mounts } : {}),
        })),
        ...(o.volumes ? { volumes: o.volumes } : {}),
      },
    };
    const r = await api(t, 'POST', `${NS}/pods`, body);
    expect(r.status, r.text).toBe(201);
  };
  const running = (name: string): Promise<unknown> =>
    until(
      `${name} running`,
      async () =>
        (await api(t, 'GET', `${NS}/pods/${name}`)).body?.status?.containerStatuses?.every(
          (c: { state?: { running?: unknown } }) => c.state?.running,
        ) === true,
      90_000,
    );

  beforeAll(async () => {
    c = await startRuntimeCluster('stowage-logs-', NODE, { hostpath: false });
    ({ dir, t, image } = c);
    await pod('talker', [
      {
        name: 'c',
        script:
          'echo one; echo two; echo three; while [ ! -e /tmp/go ]; do sleep 0.1; done; echo later; exec sleep 2147483647',
      },
    ]);
    await pod('multi', [
      { name: 'a', script: 'echo from-a; exec sleep 2147483647' },
      { name: 'b', script: 'echo from-b >&2; exec sleep 2147483647' },
    ]);
    await pod('crasher', [{ name: 'c', script: 'echo crashed-run; exit 3' }]);
    await Promise.all([running('talker'), running('multi')]);
  }, 240_000);

  afterAll(() => c?.stop(), 240_000);

  it('the node publishes its endpoint as the kubelet does', async () => {
    const node = (await api(t, 'GET', `/api/v1/nodes/${NODE}`)).body;
    expect(node.status.daemonEndpoints.kubeletEndpoint.Port).toBeGreaterThan(0);
    expect(node.status.addresses[0]).toEqual({ type: 'InternalIP', address: '127.0.0.1' });
  });

  it('logs: plain, --tail, --timestamps, --limit-bytes, -c, and the errors kube gives', async () => {
    expect((await kubectl(['logs', 'talker'])).stdout).toBe('one\ntwo\nthree\n');
    expect((await kubectl(['logs', 'talker', '--tail', '1'])).stdout).toBe('three\n');
    expect((await kubectl(['logs', 'talker', '--limit-bytes', '6'])).stdout).toBe('one\ntw');
    expect((await kubectl(['logs', 'talker', '--timestamps'])).stdout).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z one\n/,
    );
    expect((await kubectl(['logs', 'talker', '--since', '1h'])).stdout).toBe('one\ntwo\nthree\n');
    expect((await kubectl(['logs', 'multi', '-c', 'b'])).stdout).toBe('from-b\n');
    const noContainer = await api(t, 'GET', `${NS}/pods/multi/log`);
    expect(noContainer.status).toBe(400);
    expect(noContainer.body).toMatchObject({
      kind: 'Status',
      reason: 'BadRequest',
      message: 'a container name must be specified for pod multi, choose one of: [a b]',
    });
    const bad = await api(t, 'GET', `${NS}/pods/talker/log?tailLines=-1`);
    expect(bad.status).toBe(422);
    expect(bad.body.message).toBe(
      'PodLogOptions "talker" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0',
    );
    const prev = await kubectl(['logs', 'talker', '--previous']);
    expect(prev.code).not.toBe(0);
    expect(prev.stderr).toContain('previous terminated container "c" in pod "talker" not found');
  });

  it('logs -f streams a line written later; --previous shows the crashed run', async () => {
    const child = spawn('kubectl', ['--kubeconfig', c!.up.kubeconfigPath, 'logs', '-f', 'talker'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await until('the first lines', async () => out.includes('three\n'), 30_000);
      expect(out).not.toContain('later');
      expect((await kubectl(['exec', 'talker', '--', 'touch', '/tmp/go'])).code).toBe(0);
      await until('the later line', async () => out.includes('later\n'), 30_000);
    } finally {
      child.kill();
    }
    await until(
      'the crasher restarted',
      async () =>
        ((await api(t, 'GET', `${NS}/pods/crasher`)).body?.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1,
      90_000,
    );
    expect((await kubectl(['logs', 'crasher', '--previous'])).stdout).toBe('crashed-run\n');
  }, 120_000);

  it('exec without a TTY: output on both streams, stdin, and the exit code', async () => {
    const r = await kubectl(['exec', 'talker', '--', 'sh', '-c', 'echo out; echo err >&2; exit 7']);
    expect(r).toMatchObject({ stdout: 'out\n', code: 7 });
    expect(r.stderr).toContain('err\n');
    expect(await kubectl(['exec', '-i', 'talker', '--', 'cat'], 'piped in\n')).toMatchObject({
      stdout: 'piped in\n',
      code: 0,
    });
    const noPod = await kubectl(['exec', 'nosuch', '--', 'true']);
    expect(noPod.stderr).toContain('pods "nosuch" not found');
  }, 60_000);

  it('exec and cp over SPDY, as kubectl before 1.30 speaks', async () => {
    const spdy = { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false' };
    const r = await kubectl(['exec', 'talker', '--', 'sh', '-c', 'echo out; echo err >&2; exit 7'], undefined, spdy);
    expect(r).toMatchObject({ stdout: 'out\n', code: 7 });
    expect(r.stderr).toContain('err\n');
    expect(await kubectl(['exec', '-i', 'talker', '--', 'cat'], 'piped in\n', spdy)).toMatchObject({
      stdout: 'piped in\n',
      code: 0,
    });
    const local = join(dir, 'spdy.bin');
    writeFileSync(local, randomBytes(1 << 20));
    expect((await kubectl(['cp', local, 'default/talker:/tmp/spdy.bin'], undefined, spdy)).code).toBe(0);
    const back = join(dir, 'spdy-back.bin');
    expect((await kubectl(['cp', 'default/talker:/tmp/spdy.bin', back], undefined, spdy)).code).toBe(0);
    expect(readFileSync(back).equals(readFileSync(local))).toBe(true);
  }, 60_000);

  it('exec with a TTY over WebSocket v5: a shell, a resize, and the exit code', async () => {
    const { stdout, status } = await wsExec(t, 'talker', ['sh'], (send) => {
      send(4, Buffer.from(JSON.stringify({ Width: 91, Height: 37 })));
      send(0, Buffer.from('stty size; exit 5\n'));
    });
    expect(stdout).toContain('37 91');
    expect(status).toMatchObject({
      status: 'Failure',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '5' }] },
    });
  }, 60_000);

  it('cp copies a file into the pod and back out', async () => {
    // Past SPDY's and the sockets' windows both ways: 2 MiB of random bytes.
    const local = join(dir, 'payload.bin');
    writeFileSync(local, randomBytes(2 << 20));
    expect((await kubectl(['cp', local, 'default/talker:/tmp/payload.bin'])).code).toBe(0);
    expect((await kubectl(['exec', 'talker', '--', 'wc', '-c', '/tmp/payload.bin'])).stdout).toContain(String(2 << 20));
    const back = join(dir, 'back.bin');
    const r = await kubectl(['cp', 'default/talker:/tmp/payload.bin', back]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(back).equals(readFileSync(local))).toBe(true);
  }, 60_000);

  it('the documentation task: a hostPath PersistentVolume, its claim, and a pod reading the host file', async () => {
    const hostDir = join(dir, 'mnt-data');
    mkdirSync(hostDir);
    writeFileSync(join(hostDir, 'index.html'), 'Hello from Kubernetes storage\n');
    const pv = {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'task-pv-volume', labels: { type: 'local' } },
      spec: {
        storageClassName: 'manual',
        capacity: { storage: '10Gi' },
        accessModes: ['ReadWriteOnce'],
        hostPath: { path: hostDir },
      },
    };
    const pvc = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'task-pv-claim' },
      spec: { storageClassName: 'manual', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '3Gi' } } },
    };
    expect((await api(t, 'POST', '/api/v1/persistentvolumes', pv)).status).toBe(201);
    expect((await api(t, 'POST', `${NS}/persistentvolumeclaims`, pvc)).status).toBe(201);
    await pod(
      'task-pv-pod',
      [{ name: 'task-pv-container', script: 'echo serving /usr/share/nginx/html; exec sleep 2147483647' }],
      {
        volumes: [{ name: 'task-pv-storage', persistentVolumeClaim: { claimName: 'task-pv-claim' } }],
        mounts: [{ mountPath: '/usr/share/nginx/html', name: 'task-pv-storage' }],
      },
    );
    await running('task-pv-pod');
    expect((await kubectl(['exec', 'task-pv-pod', '--', 'cat', '/usr/share/nginx/html/index.html'])).stdout).toBe(
      'Hello from Kubernetes storage\n',
    );
    expect((await kubectl(['logs', 'task-pv-pod'])).stdout).toBe('serving /usr/share/nginx/html\n');
  }, 120_000);
});

/** Drives pods/exec over WebSocket v5 with a TTY as kubectl -it would; returns stdout and the final Status. */
async function wsExec(
  t: Target,
  pod: string,
  command: string[],
  script: (send: (stream: number, data: Buffer) => void) => void,
): Promise<{ stdout: string; status: unknown }> {
  const url = new URL(t.baseUrl);
  const q = new URLSearchParams([
    ...command.map((c): [string, string] => ['command', c]),
    ['stdin', 'true'],
    ['stdout', 'true'],
    ['tty', 'true'],
  ]);
  const sock = connect({ host: url.hostname, port: Number(url.port), ca: t.caPem, servername: 'localhost' });
  await new Promise<void>((resolve, reject) => sock.once('secureConnect', resolve).once('error', reject));
  sock.write(
    [
      `GET /api/v1/namespaces/default/pods/${pod}/exec?${q} HTTP/1.1`,
      `Host: ${url.host}`,
      `Authorization: Bearer ${t.token}`,
      'Connection: Upgrade',
      'Upgrade: websocket',
      'Sec-WebSocket-Version: 13',
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
      'Sec-WebSocket-Protocol: v5.channel.k8s.io',
      '',
      '',
    ].join('\r\n'),
  );
  let buf = Buffer.alloc(0);
  const decoder = new WsDecoder();
  let stdout = '';
  let status: unknown;
  let upgraded = false;
  await new Promise<void>((resolve, reject) => {
    sock.on('data', (d: Buffer) => {
      let chunk = d;
      if (!upgraded) {
        buf = Buffer.concat([buf, d]);
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.subarray(0, end).toString();
        if (!head.startsWith('HTTP/1.1 101')) return reject(new Error(head + buf.subarray(end).toString()));
        upgraded = true;
        chunk = buf.subarray(end + 4);
        script((stream, data) =>
          sock.write(encodeFrame(OPCODE.binary, Buffer.concat([Buffer.from([stream]), data]), true)),
        );
      }
      for (const m of decoder.push(chunk)) {
        if (m.opcode === OPCODE.close) return resolve();
        if (m.opcode !== OPCODE.binary || m.payload.length === 0) continue;
        if (m.payload[0] === 1) stdout += m.payload.subarray(1).toString();
        if (m.payload[0] === 3) status = JSON.parse(m.payload.subarray(1).toString());
      }
    });
    sock.on('close', () => resolve());
    sock.on('error', reject);
  });
  sock.destroy();
  return { stdout, status };
}
