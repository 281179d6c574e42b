import type { Pod } from 'kubernetes-types/core/v1.js';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../client/fake-clock.test-kit.js';
import type { RestClient } from '../../../client/rest.js';
import { NotFoundError, UnavailableError } from '../../../util/errors.js';
import { newOperationExecutor } from '../../../util/executor.js';
import type { Logger } from '../../../util/log.js';
import { newActualStateOfWorld } from '../cache/actual-state.js';
import { newDesiredStateOfWorld } from '../cache/desired-state.js';
import { PodStatusWriter } from './writer.js';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };
// No volumes: decidePod asks for Running at once.
const pod = (rv: string): Pod => ({
  metadata: { name: 'a', namespace: 'default', uid: 'uid-a', resourceVersion: rv },
  spec: { containers: [{ name: 'c', image: 'busybox' }] },
  status: { phase: 'Pending' },
});

function setup(answers: Array<Error | undefined>, runtimeActive?: (uid: string) => boolean) {
  const clock = new FakeClock();
  const exec = newOperationExecutor({ backoff: { initialMs: 500, factor: 2, capMs: 2_000 }, clock, log: quiet });
  let writes = 0;
  const patches: unknown[] = [];
  let deletes = 0;
  const pods = {
    delete: async () => {
      deletes++;
      return {};
    },
    patchStatus: async (_name: string, _type: string, patch: unknown) => {
      writes++;
      patches.push(patch);
      const a = answers.shift();
      if (a) throw a;
      return {};
    },
  };
  const client = { resource: () => pods } as unknown as RestClient;
  const writer = new PodStatusWriter(client, exec, undefined, undefined, runtimeActive);
  const asw = newActualStateOfWorld();
  const dsw = newDesiredStateOfWorld();
  const sync = async (p: Pod): Promise<void> => {
    writer.sync([p], asw, dsw);
    await exec.idle();
  };
  return { clock, exec, sync, writes: () => writes, patches, deletes: () => deletes };
}

describe('pod status writer', () => {
  it('a failed write is retried only after its backoff, then once per pod version', async () => {
    const t = setup([new UnavailableError('api down'), new UnavailableError('api down')]);
    await t.sync(pod('1'));
    expect(t.writes()).toBe(1);
    await t.sync(pod('1')); // the next 100 ms pass: still backing off
    await t.clock.advance(499);
    await t.sync(pod('1'));
    expect(t.writes()).toBe(1);
    await t.clock.advance(1);
    await t.sync(pod('1'));
    expect(t.writes()).toBe(2);
    await t.clock.advance(999);
    await t.sync(pod('1'));
    expect(t.writes()).toBe(2);
    await t.clock.advance(1);
    await t.sync(pod('1'));
    expect(t.writes()).toBe(3);
    await t.sync(pod('1')); // written for this version
    expect(t.writes()).toBe(3);
    await t.sync(pod('2')); // a new version is decided again
    expect(t.writes()).toBe(4);
  });

  it('a pod gone from the API is not retried and leaves no backoff behind', async () => {
    const t = setup([new NotFoundError('pods "a" not found')]);
    await t.sync(pod('1'));
    await t.sync(pod('1'));
    expect(t.writes()).toBe(1);
    expect(t.exec.failures('pod-status/uid-a')).toBe(0);
  });

  it('with a runtime: writes the host-paths annotation but no pod status (the runtime does), and deletes a terminating pod only once the runtime has stopped it', async () => {
    let active = true;
    const t = setup([], () => active);
    await t.sync(pod('1'));
    expect(t.patches).toEqual([{ metadata: { annotations: { 'volumes.stowage.io/host-paths': '{}' } } }]);
    const terminating: Pod = {
      ...pod('2'),
      metadata: { ...pod('2').metadata, deletionTimestamp: '2026-01-01T00:00:00Z' },
    };
    await t.sync(terminating);
    expect(t.deletes()).toBe(0);
    active = false;
    await t.sync({ ...terminating, metadata: { ...terminating.metadata, resourceVersion: '3' } });
    expect(t.deletes()).toBe(1);
  });
});
