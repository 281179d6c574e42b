import type { Lease } from 'kubernetes-types/coordination/v1.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../src/cli/testing.test-kit.js';
import { loadKubeconfig } from '../src/client/kubeconfig.js';
import { LeaderElector, apiLeaseLock } from '../src/client/leaderelection.js';
import { RestClient } from '../src/client/rest.js';

let srv: TestApiServer;
let client: RestClient;

beforeAll(async () => {
  srv = await startTestApiServer();
  client = new RestClient(await loadKubeconfig(srv.kubeconfigPath));
});
afterAll(async () => {
  client?.close();
  await srv?.close();
});

function candidate(identity: string, name: string, o: { releaseOnCancel?: boolean } = {}) {
  const state = {
    leading: false,
    stopped: false,
    observed: [] as string[],
    leaderSignal: undefined as AbortSignal | undefined,
  };
  const ctl = new AbortController();
  const elector = new LeaderElector({
    lock: apiLeaseLock({ client, name }),
    identity,
    leaseDurationMs: 2_000,
    renewDeadlineMs: 1_500,
    retryPeriodMs: 100,
    releaseOnCancel: o.releaseOnCancel,
    onStartedLeading: (signal) => {
      state.leading = true;
      state.leaderSignal = signal;
    },
    onStoppedLeading: () => {
      state.leading = false;
      state.stopped = true;
    },
    onNewLeader: (id) => state.observed.push(id),
  });
  const done = elector.run(ctl.signal);
  return { state, elector, stop: () => ctl.abort(), done };
}

const lease = (name: string): Promise<Lease> => client.resource('Lease').get(name, { namespace: 'kube-system' });

describe('leader election against the API server', () => {
  it('one of two candidates leads; when it releases on shutdown the other takes over', async () => {
    const a = candidate('a', 'ctrl');
    await vi.waitFor(() => expect(a.state.leading).toBe(true), { timeout: 10_000 });
    const b = candidate('b', 'ctrl');
    await vi.waitFor(() => expect(b.state.observed).toContain('a'), { timeout: 10_000 });
    expect(b.state.leading).toBe(false);
    expect((await lease('ctrl')).spec).toMatchObject({
      holderIdentity: 'a',
      leaseDurationSeconds: 2,
      leaseTransitions: 0,
    });

    a.stop();
    await a.done;
    expect(a.state.stopped).toBe(true);
    expect(a.state.leaderSignal?.aborted).toBe(true);
    await vi.waitFor(() => expect(b.state.leading).toBe(true), { timeout: 10_000 });
    expect((await lease('ctrl')).spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    b.stop();
    await b.done;
    expect((await lease('ctrl')).spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
  });

  it('without release, the other candidate takes over once the lease expires', async () => {
    const a = candidate('a', 'expiring', { releaseOnCancel: false });
    await vi.waitFor(() => expect(a.state.leading).toBe(true), { timeout: 10_000 });
    a.stop();
    await a.done;
    const held = (await lease('expiring')).spec;
    expect(held?.holderIdentity).toBe('a');
    const aRenewedAt = Date.parse(held?.renewTime ?? '');
    const b = candidate('b', 'expiring');
    await vi.waitFor(() => expect(b.state.leading).toBe(true), { timeout: 10_000 });
    const spec = (await lease('expiring')).spec;
    expect(spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    // b acquired only after a's lease (2 s from its last renewal) had expired
    expect(Date.parse(spec?.acquireTime ?? '')).toBeGreaterThan(aRenewedAt + 2_000);
    b.stop();
    await b.done;
  });
});
