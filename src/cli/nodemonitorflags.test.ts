import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { controllersCommand } from './controllers.js';
import { nodeMonitorOptions, type NodeMonitorFlags } from './nodemonitorflags.js';
import { upCommand } from './up.js';

/** Parses `args` for the subcommand `name` and returns what its action would have been given. */
async function parsed(name: 'up' | 'controllers', args: readonly string[]): Promise<NodeMonitorFlags> {
  const program = new Command().exitOverride().configureOutput({ writeErr: () => undefined });
  if (name === 'up') upCommand(program);
  else controllersCommand(program);
  const cmd = program.commands.find((c) => c.name() === name)!;
  let got: NodeMonitorFlags | undefined;
  cmd.exitOverride().configureOutput({ writeErr: () => undefined }).action((o: NodeMonitorFlags) => void (got = o));
  const required = name === 'controllers' ? ['--kubeconfig', '/k'] : [];
  await program.parseAsync(['node', 'stowage', name, ...required, ...args]);
  return got!;
}

describe.each(['up', 'controllers'] as const)('stowage %s: node lifecycle flags', (name) => {
  it("default to kube-controller-manager's 40s / 5s", async () => {
    expect(nodeMonitorOptions(await parsed(name, []))).toEqual({ nodeMonitorGracePeriodMs: 40_000, nodeMonitorPeriodMs: 5_000 });
  });
  it('take Go durations', async () => {
    const f = await parsed(name, ['--node-monitor-grace-period', '1m30s', '--node-monitor-period', '500ms']);
    expect(nodeMonitorOptions(f)).toEqual({ nodeMonitorGracePeriodMs: 90_000, nodeMonitorPeriodMs: 500 });
  });
  it.each([
    ['--node-monitor-grace-period', '0s', /duration must be positive/],
    ['--node-monitor-period', '5', /not a duration/],
  ])('refuse %s %s', async (flag, value, message) => {
    await expect(parsed(name, [flag, value])).rejects.toMatchObject({ code: 'commander.invalidArgument', message: expect.stringMatching(message) });
  });
});

it('one definition: both commands describe the flags alike', () => {
  const program = new Command();
  upCommand(program);
  controllersCommand(program);
  const describeFlags = (c: string) =>
    program.commands
      .find((x) => x.name() === c)!
      .options.filter((o) => o.long?.startsWith('--node-monitor'))
      .map((o) => [o.flags, o.description, o.defaultValue, o.defaultValueDescription]);
  expect(describeFlags('up').map((f) => f[3])).toEqual(['40s', '5s']); // help shows durations, not milliseconds
  expect(describeFlags('up')).toEqual(describeFlags('controllers'));
});
