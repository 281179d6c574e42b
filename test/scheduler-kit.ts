/** Shared setup for scheduler and attach/detach integration tests: Ready nodes, CSINodes, polling. */
import { vi } from 'vitest';
import type { RestClient } from '../src/client/index.js';

export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | null | false>,
  timeoutMs = 20_000,
): Promise<T> {
  return vi.waitFor(
    async () => {
      const v = await fn();
      if (v === undefined || v === null || v === false) throw new Error(`still waiting for ${what}`);
      return v;
    },
    { timeout: timeoutMs, interval: 40 },
  );
}

export async function readyNode(
  client: RestClient,
  name: string,
  labels: Record<string, string> = {},
  annotations: Record<string, string> = {},
): Promise<void> {
  await client
    .resource('Node')
    .create({ metadata: { name, labels: { 'kubernetes.io/hostname': name, ...labels }, annotations } });
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await client.resource('Node').patchStatus(name, 'merge', {
    status: {
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'KubeletReady',
          message: 'ready',
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        },
      ],
    },
  });
}

export async function csiNode(
  client: RestClient,
  name: string,
  drivers: Array<{ name: string; count?: number; topologyKeys?: string[] }>,
): Promise<void> {
  await client.resource('CSINode').create({
    metadata: { name },
    spec: {
      drivers: drivers.map((d) => ({
        name: d.name,
        nodeID: name,
        ...(d.topologyKeys ? { topologyKeys: d.topologyKeys } : {}),
        ...(d.count !== undefined ? { allocatable: { count: d.count } } : {}),
      })),
    },
  });
}
