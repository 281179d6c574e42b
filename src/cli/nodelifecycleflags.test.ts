import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { controllersCommand } from './controllers.js';
import { nodeLifecycleOptions, type NodeLifecycleFlags } from './nodelifecycleflags.js';
import { upCommand } from './up.js';

/** Parses `args` for the subcommand `name` and returns what its action would have been given. */
async function parsed(name: 'up' | 'controllers', args: readonly string[]): Promise<NodeLifecycleFlags> {
  const program = new Command().exitOverride().configureOutput({ writeErr: () => undefined });
  if (name === 'up') upCommand(program);
  else controllersCommand(program);
  const cmd = program.commands.find((c) => c.name() === name)!;
  let got: NodeLifecycleFlags | undefined;
  cmd
    .exitOverride()
    .configureOutput({ writeErr: () => undefined })
    .action((o: NodeLifecycleFlags) => void (got = o));
  const required = name === 'controllers' ? ['--kubeconfig', '/k'] : [];
  await program.parseAsync(['node', 'stowage', name, ...required, ...args]);
  return got!;
}

describe.each(['up', 'controllers'] as const)('stowage %s: node lifecycle flags', (name) => {
  it("default to kube-controller-manager's", async () => {
    expect(nodeLifecycleOptions(await parsed(name, []))).toEqual({
      nodeMonitorGracePeriodMs: 40_000,
      nodeMonitorPeriodMs: 5_000,
      evictionLimits: {
        nodeEvictionRate: 0.1,
        secondaryNodeEvictionRate: 0.01,
        largeClusterSizeThreshold: 50,
        unhealthyZoneThreshold: 0.55,
      },
    });
  });
  it('take Go durations and numbers in range', async () => {
    const f = await parsed(name, [
      ...['--node-monitor-grace-period', '1m30s', '--node-monitor-period', '500ms'],
      ...[
        '--node-eviction-rate',
        '2',
        '--secondary-node-eviction-rate',
        '0',
        '--large-cluster-size-threshold',
        '3',
        '--unhealthy-zone-threshold',
        '.6',
      ],
    ]);
    expect(nodeLifecycleOptions(f)).toEqual({
      nodeMonitorGracePeriodMs: 90_000,
      nodeMonitorPeriodMs: 500,
      evictionLimits: {
        nodeEvictionRate: 2,
        secondaryNodeEvictionRate: 0,
        largeClusterSizeThreshold: 3,
        unhealthyZoneThreshold: 0.6,
      },
    });
  });
  it.each([
    ['--node-monitor-grace-period', '0s', /duration must be positive/],
    ['--node-monitor-period', '5', /not a duration/],
    ['--node-eviction-rate', '0', /--node-eviction-rate must be greater than 0/],
    ['--unhealthy-zone-threshold', '1.5', /--unhealthy-zone-threshold must be at least 0 and at most 1/],
  ])('refuse %s %s', async (flag, value, message) => {
    await expect(parsed(name, [flag, value])).rejects.toMatchObject({
      code: 'commander.invalidArgument',
      message: expect.stringMatching(message),
    });
  });
});

it('one definition: both commands describe every node lifecycle flag alike', () => {
  const program = new Command();
  upCommand(program);
  controllersCommand(program);
  const NAMES = [
    '--node-monitor-grace-period',
    '--node-monitor-period',
    '--node-eviction-rate',
    '--secondary-node-eviction-rate',
    '--large-cluster-size-threshold',
    '--unhealthy-zone-threshold',
  ];
  const describeFlags = (c: string) =>
    program.commands
      .find((x) => x.name() === c)!
      .options.filter((o) => NAMES.includes(o.long ?? ''))
      .map((o) => [o.flags, o.description, o.defaultValue, o.defaultValueDescription]);
  expect(describeFlags('up').map((f) => String(f[0]).split(' ')[0])).toEqual(NAMES);
  expect(
    describeFlags('up')
      .slice(0, 2)
      .map((f) => f[3]),
  ).toEqual(['40s', '5s']); // help shows durations, not milliseconds
  expect(describeFlags('up')).toEqual(describeFlags('controllers'));
});
