import { InvalidArgumentError, type Command } from 'commander';
import { DEFAULT_DRIVER_NAME } from './driver.js';
import { runHostpathDriver } from './server.js';

function nonNegativeInt(flag: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!/^\d+$/.test(v) || !Number.isSafeInteger(n)) throw new InvalidArgumentError(`${flag} must be a non-negative integer`);
    return n;
  };
}

/** Adds `stowage csi-hostpath`: the built-in hostpath CSI driver, until SIGINT/SIGTERM. */
export function hostpathCommand(program: Command): Command {
  return program
    .command('csi-hostpath')
    .description('run the built-in hostpath CSI driver (Identity, Controller and Node services)')
    .requiredOption('--endpoint <unix:///path>', 'CSI endpoint to listen on (unix socket)')
    .requiredOption('--node-id <id>', 'this node\'s id, as NodeGetInfo reports it')
    .requiredOption('--state-dir <dir>', 'where volumes, snapshots and the state file live')
    .option('--driver-name <name>', 'CSI driver name', DEFAULT_DRIVER_NAME)
    .option('--enable-attach', 'support ControllerPublish/ControllerUnpublish', false)
    .option('--max-volumes-per-node <n>', 'max_volumes_per_node reported by NodeGetInfo (0 = no limit)', nonNegativeInt('--max-volumes-per-node'), 0)
    .option('--capacity <bytes>', 'total bytes all volumes may take (default: unlimited)', nonNegativeInt('--capacity'))
    .action(async (opts: { endpoint: string; nodeId: string; stateDir: string; driverName: string; enableAttach: boolean; maxVolumesPerNode: number; capacity?: number }) => {
      const ac = new AbortController();
      const stop = (): void => ac.abort();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      try {
        await runHostpathDriver({
          endpoint: opts.endpoint,
          nodeId: opts.nodeId,
          stateDir: opts.stateDir,
          driverName: opts.driverName,
          enableAttach: opts.enableAttach,
          maxVolumesPerNode: opts.maxVolumesPerNode,
          ...(opts.capacity !== undefined ? { capacityBytes: opts.capacity } : {}),
          signal: ac.signal,
        });
      } finally {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
      }
    });
}
