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
    if (!ep) throw new UnavailableError(`driver name ${driver} not found in the list of registered CSI drivers`);
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

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }
}
