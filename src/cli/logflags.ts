/**
 * The kubelet's container log rotation settings as flags of `stowage node` and `stowage up`:
 * `--container-log-max-size` (a quantity, 10Mi) and `--container-log-max-files` (5, at least 2).
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { quantityBytes } from '../kube/quantity.js';
import { DEFAULT_LOG_ROTATION, type LogRotationPolicy } from '../node/runtime/log-rotation.js';

export interface ContainerLogFlags {
  readonly containerLogMaxSize: number;
  readonly containerLogMaxFiles: number;
}

function size(s: string): number {
  let n: bigint;
  try {
    n = quantityBytes(s);
  } catch {
    throw new InvalidArgumentError(`not a quantity: ${JSON.stringify(s)} (e.g. 10Mi)`);
  }
  if (n <= 0n) throw new InvalidArgumentError('must be positive');
  return Number(n);
}

function files(s: string): number {
  const n = Number(s);
  // The kubelet's validation: one live file and at least one rotated.
  if (!Number.isInteger(n) || n < 2) throw new InvalidArgumentError('must be an integer of at least 2');
  return n;
}

export function addContainerLogFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option(
        '--container-log-max-size <quantity>',
        "size at which a container's log file is rotated (the kubelet's containerLogMaxSize)",
      )
        .argParser(size)
        .default(DEFAULT_LOG_ROTATION.maxSizeBytes, '10Mi'),
    )
    .option(
      '--container-log-max-files <n>',
      "log files kept per container, the live one included (the kubelet's containerLogMaxFiles)",
      files,
      DEFAULT_LOG_ROTATION.maxFiles,
    );
}

export function containerLogPolicy(f: Partial<ContainerLogFlags>): LogRotationPolicy {
  return {
    maxSizeBytes: f.containerLogMaxSize ?? DEFAULT_LOG_ROTATION.maxSizeBytes,
    maxFiles: f.containerLogMaxFiles ?? DEFAULT_LOG_ROTATION.maxFiles,
  };
}
