import { CsiClient } from '../../../csi/client.js';
import { UnavailableError } from '../../../util/errors.js';
import type { Logger } from '../../../util/log.js';
import type { MetricsRegistry } from '../../../util/metrics.js';
import { recordKubeletOperations } from '../../../csi/metrics.js';

/**
 * Where a registered CSI driver listens. The plugin manager's registry implements this
 * (`endpoint: (name) => registry.getDriver(name)?.endpoint`).
 */
export interface CsiDriverLookup {
  endpoint(driverName: string): string | undefined;
}

/**
 * An operation on a volume whose driver has not registered (yet): expected while drivers start
 * after the node agent; retried with backoff, said once per driver rather than per attempt.
 */
export class DriverNotRegisteredError extends UnavailableError {}

/** One CsiClient per driver endpoint, replaced when the driver re-registers elsewhere. */
export class CsiClients {
  private readonly clients = new Map<string, CsiClient>();

  constructor(
    private readonly drivers: CsiDriverLookup,
    private readonly log: Logger,
    /** Where the kubelet's csi_operations_seconds goes, if anywhere. */
    private readonly metrics?: MetricsRegistry,
  ) {}

  /** Throws a retryable UnavailableError naming the driver when it is not registered. */
  get(driver: string): CsiClient {
    const ep = this.drivers.endpoint(driver);
    if (!ep) {
      if (!this.waitingFor.has(driver)) {
        this.waitingFor.add(driver);
        this.log.info('waiting for a CSI driver to register; operations on its volumes retry until it does', {
          driver,
        });
      }
      throw new DriverNotRegisteredError(`driver name ${driver} not found in the list of registered CSI drivers`);
    }
    this.waitingFor.delete(driver);
    const c = this.clients.get(driver);
    if (c && this.endpoints.get(driver) === ep) return c;
    c?.close();
    const n = new CsiClient({ endpoint: ep, log: this.log, caller: 'kubelet', driverName: driver });
    if (this.metrics) recordKubeletOperations(n, this.metrics);
    this.clients.set(driver, n);
    this.endpoints.set(driver, ep);
    return n;
  }

  private readonly endpoints = new Map<string, string>();
  /** Drivers already said to be awaited (once each until they register). */
  private readonly waitingFor = new Set<string>();

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }
}
