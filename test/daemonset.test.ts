/**
 * DaemonSets through kubectl on node hosts (network namespaces, each with its own node agent):
 * a DaemonSet rolls out one pod per node (pinned by node affinity, bound by the scheduler), is
 * updated and rolled back with `kubectl rollout`, follows a node joining and a node tainted
 * NoExecute, and goes with its pods. Pods are volume-only (no container runtime).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNetnsCluster, netnsUnavailable, type NetnsCluster } from '../bench/netns/hosts.js';
import { built, hasKubectl } from './helpers/env.js';
import { until } from './scheduler-kit.js';

const unavailable = !built
  ? 'no build (run npx tsc -p tsconfig.build.json)'
  : !hasKubectl
    ? 'no kubectl'
    : await netnsUnavailable();
if (unavailable) console.warn(`daemonset tests skipped: ${unavailable}`);

const DS = (image: string): string => `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels:
      app: agent
  template:
    metadata:
      labels:
        app: agent
    spec:
      containers:
      - name: agent
        image: ${image}
        volumeMounts:
        - name: scratch
          mountPath: /scratch
      volumes:
      - name: scratch
        emptyDir: {}
`;

describe.skipIf(unavailable !== undefined)('DaemonSets through kubectl on node hosts', () => {
  let cluster: NetnsCluster;

  beforeAll(async () => {
    cluster = await startNetnsCluster();
    for (const name of ['b', 'c']) await cluster.addHost(name);
    await until(
      'nodes b and c registered',
      async () => (await cluster.client.resource('Node').list()).items.length === 2,
      60_000,
    );
  }, 120_000);

  afterAll(async () => {
    if (!cluster) return;
    await cluster.close();
    expect(await cluster.leftovers()).toEqual([]);
  }, 60_000);

  const kubectl = async (args: string[], stdin?: string): Promise<string> => {
    const p = promisify(execFile)('kubectl', args, {
      env: { ...process.env, KUBECONFIG: cluster.kubeconfig, HOME: cluster.dir },
      timeout: 120_000,
    });
    if (stdin !== undefined) {
      p.child.stdin?.end(stdin);
    }
    return (await p).stdout;
  };
  const livePods = async (): Promise<Pod[]> =>
    (await cluster.client.resource('Pod').list({ namespace: 'default', labelSelector: 'app=agent' })).items.filter(
      (p) => !p.metadata?.deletionTimestamp,
    );
  const placement = async (): Promise<string[]> =>
    (await livePods()).map((p) => `${p.spec?.nodeName}:${p.spec?.containers[0]?.image}`).sort();
  const rollout = (): Promise<string> => kubectl(['rollout', 'status', 'ds/agent', '--timeout=120s']);

  it('rolls out one pod per node, updates, rolls back, follows nodes and goes with its pods', async () => {
    await kubectl(['apply', '-f', '-'], DS('registry.local/agent:1'));
    expect(await rollout()).toContain('daemon set "agent" successfully rolled out');
    expect(await placement()).toEqual(['b:registry.local/agent:1', 'c:registry.local/agent:1']);
    const [pod] = await livePods();
    expect(pod?.metadata?.generateName).toBe('agent-');
    expect(pod?.metadata?.labels).toMatchObject({ 'pod-template-generation': '1' });
    expect(pod?.metadata?.ownerReferences).toMatchObject([{ kind: 'DaemonSet', name: 'agent', controller: true }]);
    expect(pod?.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution).toEqual({
      nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [pod?.spec?.nodeName] }] }],
    });
    expect(pod?.spec?.tolerations?.map((t) => t.key)).toContain('node.kubernetes.io/unschedulable');
    const table = await kubectl(['get', 'ds', 'agent']);
    expect(table).toMatch(/NAME\s+DESIRED\s+CURRENT\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+NODE SELECTOR\s+AGE/);
    expect(table).toMatch(/agent\s+2\s+2\s+2\s+2\s+2\s+<none>/);
    const described = await kubectl(['describe', 'ds', 'agent']);
    expect(described).toMatch(/Desired Number of Nodes Scheduled: 2/);
    expect(described).toMatch(/Pods Status:\s+2 Running/);
    expect(described).toMatch(/SuccessfulCreate\s.*Created pod: agent-/);

    await kubectl(['set', 'image', 'ds/agent', 'agent=registry.local/agent:2']);
    await rollout();
    expect(await placement()).toEqual(['b:registry.local/agent:2', 'c:registry.local/agent:2']);
    expect(await kubectl(['rollout', 'history', 'ds/agent'])).toMatch(
      /REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/,
    );

    await kubectl(['rollout', 'undo', 'ds/agent']);
    await rollout();
    expect(await placement()).toEqual(['b:registry.local/agent:1', 'c:registry.local/agent:1']);
    // The first revision, renumbered as the newest.
    expect(await kubectl(['rollout', 'history', 'ds/agent'])).toMatch(
      /REVISION\s+CHANGE-CAUSE\n2\s+<none>\n3\s+<none>/,
    );
    const revisions = await cluster.client.resource('ControllerRevision').list({ namespace: 'default' });
    expect(revisions.items).toHaveLength(2);

    // A node joining gets its pod; a node tainted NoExecute loses it.
    await cluster.addHost('d');
    await until('a pod on d', async () => (await placement()).includes('d:registry.local/agent:1'), 60_000);
    await kubectl(['taint', 'nodes', 'c', 'maintenance=yes:NoExecute']);
    await until(
      'no pod on c',
      async () => (await placement()).join() === 'b:registry.local/agent:1,d:registry.local/agent:1',
      60_000,
    );
    await rollout();
    const ds = JSON.parse(await kubectl(['get', 'ds', 'agent', '-o', 'json']));
    expect(ds.status).toMatchObject({ desiredNumberScheduled: 2, currentNumberScheduled: 2, numberMisscheduled: 0 });

    await kubectl(['delete', 'ds', 'agent', '--wait=true']);
    await until(
      'pods gone',
      async () => (await cluster.client.resource('Pod').list({ namespace: 'default' })).items.length === 0,
      60_000,
    );
  }, 400_000);
});
