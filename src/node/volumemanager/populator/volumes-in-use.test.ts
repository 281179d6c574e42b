import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../client/fake-clock.test-kit.js';
import type { RestClient } from '../../../client/rest.js';
import { UnavailableError } from '../../../util/errors.js';
import { newOperationExecutor } from '../../../util/executor.js';
import type { Logger } from '../../../util/log.js';
import { newDesiredStateOfWorld } from '../cache/desired-state.js';
import { want } from '../fixtures.test-kit.js';
import { VolumesInUseReporter } from './volumes-in-use.js';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };

describe('volumesInUse reporter', () => {
  it('writes the desired volumes, backs off after a failure, marks them reported once written', async () => {
    const clock = new FakeClock();
    const exec = newOperationExecutor({ backoff: { initialMs: 500, factor: 2, capMs: 2_000 }, clock, log: quiet });
    const written: unknown[] = [];
    let failuresLeft = 1;
    const nodes = {
      patchStatus: async (_name: string, _type: string, patch: { status: { volumesInUse: unknown } }) => {
        written.push(patch.status.volumesInUse);
        if (failuresLeft-- > 0) throw new UnavailableError('api down');
        return {};
      },
    };
    const client = { resource: () => nodes } as unknown as RestClient;
    const reporter = new VolumesInUseReporter(client, 'node-1', exec);
    const dsw = newDesiredStateOfWorld();
    dsw.addPodToVolume(want('p', 'h1'));
    const pass = async (): Promise<void> => {
      reporter.sync(dsw);
      await exec.idle();
    };
    const reported = (): boolean[] => dsw.volumesToMount().map((v) => v.reportedInUse);

    await pass();
    expect(written).toHaveLength(1);
    await clock.advance(499);
    await pass();
    expect(written).toHaveLength(1);
    expect(reported()).toEqual([false]);
    await clock.advance(1);
    await pass();
    expect(written).toEqual([
      ['kubernetes.io/csi/hostpath.csi.k8s.io^h1'],
      ['kubernetes.io/csi/hostpath.csi.k8s.io^h1'],
    ]);
    expect(reported()).toEqual([false]); // marked on the pass after the write
    await pass();
    expect(reported()).toEqual([true]);
    expect(written).toHaveLength(2);
  });
});
