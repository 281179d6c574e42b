/** One CSI driver usable on this node. */
export interface CsiDriverInfo {
  readonly name: string;
  /** The driver's CSI socket (`unix://` optional), as the node agent reaches it. */
  readonly endpoint: string;
  /** Highest CSI 1.x version the driver supports. */
  readonly highestSupportedVersion: string;
  /** The registration socket this entry came from. */
  readonly socketPath: string;
}

/**
 * The node's CSI drivers by name: what the volume manager reads to find a driver's endpoint.
 * Written only by the CSI plugin handler. Synchronous; getters return copies.
 */
export interface CsiDriverRegistry {
  /** The driver's entry, or undefined when it is not registered. */
  getDriver(name: string): CsiDriverInfo | undefined;
  listDrivers(): CsiDriverInfo[];
}

export interface MutableCsiDriverRegistry extends CsiDriverRegistry {
  /** Sets the driver's entry; returns the one it replaced (to restore on failure). */
  set(info: CsiDriverInfo): CsiDriverInfo | undefined;
  /** Puts back an earlier entry, or removes the name when `previous` is undefined. */
  restore(name: string, previous: CsiDriverInfo | undefined): void;
  /** Removes the driver only if its entry came from `socketPath`; returns whether it did. */
  removeFrom(name: string, socketPath: string): boolean;
}

export function newCsiDriverRegistry(): MutableCsiDriverRegistry {
  const drivers = new Map<string, CsiDriverInfo>();
  return {
    getDriver: (name) => {
      const d = drivers.get(name);
      return d ? { ...d } : undefined;
    },
    listDrivers: () => [...drivers.values()].map((d) => ({ ...d })),
    set: (info) => {
      const prev = drivers.get(info.name);
      drivers.set(info.name, { ...info });
      return prev;
    },
    restore: (name, previous) => {
      if (previous) drivers.set(name, previous);
      else drivers.delete(name);
    },
    removeFrom: (name, socketPath) => {
      if (drivers.get(name)?.socketPath !== socketPath) return false;
      drivers.delete(name);
      return true;
    },
  };
}
