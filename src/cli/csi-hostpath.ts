/** `stowage csi-hostpath`: the built-in hostpath CSI driver as its own process. */
import type { Command } from 'commander';
import { DEFAULT_DRIVER_NAME } from '../csi/hostpath/driver.js';
import { runHostpathDriver } from '../csi/hostpath/server.js';
import { nonNegativeInt } from './flags.js';
import { runUntilSignalled } from './signals.js';

interface HostpathFlags {
  readonly endpoint: string;
  readonly nodeId: string;
  readonly stateDir: string;
  readonly driverName: string;
  readonly enableAttach: boolean;
  readonly maxVolumesPerNode: number;
  readonly capacity?: number;
  readonly sharedStorage: boolean;
  readonly volumesFrom?: string;
}

/** Adds `stowage csi-hostpath`: the built-in hostpath CSI driver, until SIGINT/SIGTERM. */
export function hostpathCommand(program: Command): Command {
  return program
    .command('csi-hostpath')
    .description('run the built-in hostpath CSI driver (Identity, Controller and Node services)')
    .requiredOption('--endpoint <unix:///path>', 'CSI endpoint to listen on (unix socket)')
    .requiredOption('--node-id <id>', "this node's id, as NodeGetInfo reports it")
    .requiredOption('--state-dir <dir>', 'where volumes, snapshots and the state file live')
    .option('--driver-name <name>', 'CSI driver name', DEFAULT_DRIVER_NAME)
    .option('--enable-attach', 'support ControllerPublish/ControllerUnpublish', false)
    .option(
      '--max-volumes-per-node <n>',
      'max_volumes_per_node reported by NodeGetInfo (0 = no limit)',
      nonNegativeInt('--max-volumes-per-node'),
      0,
    )
    .option('--capacity <bytes>', 'total bytes all volumes may take (default: unlimited)', nonNegativeInt('--capacity'))
    .option(
      '--shared-storage',
      'act as shared storage reachable from every node (volumes without topology, published to any node); nodes mount them with --volumes-from',
      false,
    )
    .option(
      '--volumes-from <state-dir>',
      'node side of shared storage: mount the volumes of the --shared-storage driver whose --state-dir this is',
    )
    .action(async (f: HostpathFlags) => {
      await runUntilSignalled((signal) =>
        runHostpathDriver({
          endpoint: f.endpoint,
          nodeId: f.nodeId,
          stateDir: f.stateDir,
          driverName: f.driverName,
          enableAttach: f.enableAttach,
          maxVolumesPerNode: f.maxVolumesPerNode,
          ...(f.capacity !== undefined ? { capacityBytes: f.capacity } : {}),
          sharedStorage: f.sharedStorage,
          ...(f.volumesFrom !== undefined ? { volumesFrom: f.volumesFrom } : {}),
          signal,
        }),
      );
    });
}
