/**
 * Leader-election flags in the two spellings upstream uses: kube-controller-manager's
 * `--leader-elect-*` and the CSI sidecars' `--leader-election-*`. Durations are Go durations.
 */
import type { Command } from 'commander';
import { DEFAULT_TIMINGS, timingsError, type LeaderElectionConfig } from '../client/index.js';
import { CliError } from './errors.js';
import { parsePositiveDuration } from './flags.js';

export type LeaderFlagSpelling = 'leader-elect' | 'leader-election';

interface RawLeaderFlags {
  readonly leaseDuration: string;
  readonly renewDeadline: string;
  readonly retryPeriod: string;
  readonly namespace: string;
  readonly name?: string;
}

const seconds = (ms: number): string => `${ms / 1000}s`;

/** Adds `--<p>-lease-duration`, `--<p>-renew-deadline`, `--<p>-retry-period` and the lease's namespace (and name, kube-controller-manager only). */
export function addLeaderElectionTimingFlags(cmd: Command, p: LeaderFlagSpelling, leaseNameDefault?: string): Command {
  cmd
    .option(
      `--${p}-lease-duration <duration>`,
      'how long a candidate waits, after the lease last changed, before taking it over',
      seconds(DEFAULT_TIMINGS.leaseDurationMs),
    )
    .option(
      `--${p}-renew-deadline <duration>`,
      'how long the leader keeps trying to renew before it stops acting and exits',
      seconds(DEFAULT_TIMINGS.renewDeadlineMs),
    )
    .option(
      `--${p}-retry-period <duration>`,
      'how often candidates try to acquire and the leader renews',
      seconds(DEFAULT_TIMINGS.retryPeriodMs),
    );
  if (p === 'leader-elect') {
    cmd.option('--leader-elect-resource-name <name>', 'name of the Lease', leaseNameDefault);
    cmd.option('--leader-elect-resource-namespace <ns>', 'namespace of the Lease', 'kube-system');
  } else {
    cmd.option('--leader-election-namespace <ns>', 'namespace of the Lease', 'kube-system');
  }
  return cmd;
}

/** The parsed flags of `addLeaderElectionTimingFlags`, checked as client-go checks them. */
export function leaderElectionConfig(
  flags: Readonly<Record<string, unknown>>,
  p: LeaderFlagSpelling,
): LeaderElectionConfig {
  const camel = p === 'leader-elect' ? 'leaderElect' : 'leaderElection';
  const raw: RawLeaderFlags = {
    leaseDuration: String(flags[`${camel}LeaseDuration`]),
    renewDeadline: String(flags[`${camel}RenewDeadline`]),
    retryPeriod: String(flags[`${camel}RetryPeriod`]),
    namespace: String(flags[p === 'leader-elect' ? 'leaderElectResourceNamespace' : 'leaderElectionNamespace']),
    ...(typeof flags.leaderElectResourceName === 'string' ? { name: flags.leaderElectResourceName } : {}),
  };
  const duration = (flag: string, v: string): number => {
    try {
      return parsePositiveDuration(v);
    } catch (e) {
      throw new CliError(`invalid --${p}-${flag} ${JSON.stringify(v)}: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  const timings = {
    leaseDurationMs: duration('lease-duration', raw.leaseDuration),
    renewDeadlineMs: duration('renew-deadline', raw.renewDeadline),
    retryPeriodMs: duration('retry-period', raw.retryPeriod),
  };
  const invalid = timingsError(timings);
  if (invalid) throw new CliError(`invalid leader election timings: ${invalid}`);
  return { ...timings, leaseNamespace: raw.namespace, ...(raw.name ? { leaseName: raw.name } : {}) };
}
