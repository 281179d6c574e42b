/** Unit-test kit for the hostpath RPC functions: a driver state on a temp dir, and full requests. */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { CreateVolumeRequest__Output, VolumeCapability__Output } from '../proto/types.js';
import { unmount } from '../../mount/mount.js';
import { mountsUnder } from '../../mount/mountinfo.js';
import type { Logger } from '../../util/log.js';
import { HostpathDriver, type HostpathConfig } from './driver.js';
import { parseState, STATE_FILE, type DriverStateData } from './state.js';

export const MiB = 1024 * 1024;

const silent: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silent,
};

export interface TestDriver {
  readonly d: HostpathDriver;
  readonly stateDir: string;
  /** The state as it is on disk (what a crash now would leave). */
  onDisk(): Promise<DriverStateData>;
  /** A second driver opened on the same state dir, as a restart would. */
  reopen(): Promise<HostpathDriver>;
  close(): Promise<void>;
}

export async function openTestDriver(config: Partial<HostpathConfig> = {}): Promise<TestDriver> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'stowage-hp-unit-'));
  const stateDir = path.join(dir, 'state');
  const full: HostpathConfig = {
    driverName: 'hostpath.test',
    nodeId: 'n1',
    stateDir,
    enableAttach: false,
    maxVolumesPerNode: 0,
    capacityBytes: undefined,
    ...config,
  };
  const d = await HostpathDriver.open(full, silent);
  return {
    d,
    stateDir,
    onDisk: async () => parseState(await readFile(path.join(stateDir, STATE_FILE), 'utf8')),
    reopen: () => HostpathDriver.open(full, silent),
    close: async () => {
      // A failed test may leave a mount: never delete through it.
      for (const m of (await mountsUnder(dir)).reverse()) await unmount(m.mountPoint);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export const dirCap = (): VolumeCapability__Output => ({
  mount: { fsType: '', mountFlags: [], volumeMountGroup: '' },
  accessMode: { mode: 'SINGLE_NODE_WRITER' },
});
export const blockCap = (): VolumeCapability__Output => ({ block: {}, accessMode: { mode: 'SINGLE_NODE_WRITER' } });

export function createRequest(name: string, o: Partial<CreateVolumeRequest__Output> = {}): CreateVolumeRequest__Output {
  return {
    name,
    capacityRange: { requiredBytes: 8 * MiB, limitBytes: 0 },
    volumeCapabilities: [dirCap()],
    parameters: {},
    secrets: {},
    volumeContentSource: null,
    accessibilityRequirements: null,
    mutableParameters: {},
    ...o,
  };
}
