import type { RestClient } from '../../../client/rest.js';
import type { OperationExecutor } from '../../../util/executor.js';
import type { DesiredStateOfWorld } from '../cache/desired-state.js';
import type { VolumeName } from '../types.js';

/** The executor key of the node's volumesInUse writes; not a volume name. */
const KEY = 'node-status/volumesInUse';

/**
 * Keeps node.status.volumesInUse equal to the desired volumes (kubelet: volumes in use are never
 * detached by the attach/detach controller). After a successful write the volumes are marked
 * reportedInUse, which lets the reconciler verify attachable ones. Writes go through the executor:
 * one at a time, backoff after a failure.
 */
export class VolumesInUseReporter {
  private last: string | undefined;
  /** The desired volume set generation already reported and marked: nothing to do until it changes. */
  private settledGeneration = -1;

  constructor(
    private readonly client: RestClient,
    private readonly nodeName: string,
    private readonly exec: OperationExecutor,
  ) {}

  sync(dsw: DesiredStateOfWorld): void {
    if (this.exec.isPending(KEY)) return;
    const generation = dsw.volumeSetGeneration();
    if (generation === this.settledGeneration) return;
    const names = dsw.volumeNames();
    const key = JSON.stringify(names);
    if (key === this.last) {
      dsw.markVolumesReportedInUse(names);
      this.settledGeneration = generation;
      return;
    }
    // The caches are marked on the next pass, once `last` says what the Node holds.
    this.exec.run(KEY, 'update_volumes_in_use', async () => {
      await this.write(names);
      this.last = key;
    });
  }

  private async write(names: readonly VolumeName[]): Promise<void> {
    await this.client
      .resource('Node')
      .patchStatus(this.nodeName, 'merge', { status: { volumesInUse: names.length ? names : null } });
  }
}
