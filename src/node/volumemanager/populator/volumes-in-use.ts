import type { RestClient } from '../../../client/rest.js';
import { NotFoundError } from '../../../util/errors.js';
import type { Logger } from '../../../util/log.js';
import type { DesiredStateOfWorld } from '../cache/desired-state.js';
import type { VolumeName } from '../types.js';

/**
 * Keeps node.status.volumesInUse equal to the desired volumes (kubelet: volumes in use are never
 * detached by the attach/detach controller). After a successful write the volumes are marked
 * reportedInUse, which lets the reconciler verify attachable ones.
 */
export class VolumesInUseReporter {
  private last: string | undefined;
  /** The desired volume set generation already reported and marked: nothing to do until it changes. */
  private settledGeneration = -1;
  private writing: Promise<void> | undefined;

  constructor(
    private readonly client: RestClient,
    private readonly nodeName: string,
    private readonly log: Logger,
    private readonly onReported: () => void,
  ) {}

  sync(dsw: DesiredStateOfWorld): void {
    if (this.writing) return;
    const generation = dsw.volumeSetGeneration();
    if (generation === this.settledGeneration) return;
    const names = dsw.volumeNames();
    const key = JSON.stringify(names);
    if (key === this.last) {
      dsw.markVolumesReportedInUse(names);
      this.settledGeneration = generation;
      return;
    }
    this.writing = this.write(names)
      .then(() => {
        this.last = key;
      })
      .catch((e: unknown) => {
        if (!(e instanceof NotFoundError)) this.log.warn('updating node.status.volumesInUse failed', { error: String(e) });
      })
      .finally(() => {
        this.writing = undefined;
        this.onReported();
      });
  }

  private async write(names: readonly VolumeName[]): Promise<void> {
    await this.client.resource('Node').patchStatus(this.nodeName, 'merge', { status: { volumesInUse: names.length ? names : null } });
  }

  async idle(): Promise<void> {
    await this.writing;
  }
}
