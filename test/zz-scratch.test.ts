import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'vitest';
import { api } from './helpers/http.js';
import { startRegistry, stopLeftoverContainerd, unmountUnder } from './helpers/runtime.js';
import { startUp } from './helpers/up.js';

it('scratch', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'stowage-dbg-'));
  const registry = await startRegistry(join(dir, 'registry'));
  const pause = await registry.push('pause', 't1', ['sleep', '2147483647']);
  const image = await registry.push('busybox', 't1', ['sh']);
  const up = await startUp(join(dir, 'data'), 'dbg', ['--no-hostpath', '--pod-infra-container-image', pause], { runtime: true, stderr: 'inherit' });
  const body = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'talker' }, spec: { nodeName: 'dbg', terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image, command: ['sh', '-c', 'echo one; echo two >&2; echo three; while [ ! -e /tmp/go ]; do sleep 0.1; done; echo later; exec sleep 2147483647'] }] } };
  await api(up.target, 'POST', '/api/v1/namespaces/default/pods', body);
  writeFileSync('/tmp/dbg-info', JSON.stringify({ kubeconfig: up.kubeconfigPath, image, dir }));
  while (!existsSync('/tmp/dbg-stop')) await new Promise((r) => setTimeout(r, 500));
  rmSync('/tmp/dbg-stop');
  await api(up.target, 'DELETE', '/api/v1/namespaces/default/pods').catch(() => undefined);
  await new Promise((r) => setTimeout(r, 5000));
  up.child.kill('SIGTERM');
  await up.exit;
  await stopLeftoverContainerd(join(dir, 'data', 'containerd'));
  await registry.stop();
  await unmountUnder(dir);
  rmSync(dir, { recursive: true, force: true });
}, 3_600_000);
