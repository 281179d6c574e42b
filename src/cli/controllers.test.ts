import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { DEFAULT_EVICTION_LIMITS } from '../controllers/nodelifecycle/zones.js';
import { controllersCommand } from './controllers.js';
import { addEvictionLimitFlags, evictionLimits } from './nodelifecycleflags.js';
import { boundedNumber } from './flags.js';

const parse = async (...args: string[]): Promise<void> => {
  const program = new Command().exitOverride().configureOutput({ writeErr: () => undefined });
  controllersCommand(program);
  await program.parseAsync(['node', 'stowage', 'controllers', '--kubeconfig', '/nonexistent', ...args]);
};

describe('stowage controllers: zone eviction flags', () => {
  it("default to kube-controller-manager's", () => {
    const cmd = addEvictionLimitFlags(new Command());
    cmd.parse([], { from: 'user' });
    expect(evictionLimits(cmd.opts())).toEqual(DEFAULT_EVICTION_LIMITS);
    expect(DEFAULT_EVICTION_LIMITS).toEqual({
      nodeEvictionRate: 0.1,
      secondaryNodeEvictionRate: 0.01,
      largeClusterSizeThreshold: 50,
      unhealthyZoneThreshold: 0.55,
    });
  });

  it('take values in range', () => {
    const cmd = addEvictionLimitFlags(new Command());
    cmd.parse(
      [
        '--node-eviction-rate',
        '2',
        '--secondary-node-eviction-rate',
        '0',
        '--large-cluster-size-threshold',
        '0',
        '--unhealthy-zone-threshold',
        '1',
      ],
      { from: 'user' },
    );
    expect(evictionLimits(cmd.opts())).toEqual({
      nodeEvictionRate: 2,
      secondaryNodeEvictionRate: 0,
      largeClusterSizeThreshold: 0,
      unhealthyZoneThreshold: 1,
    });
  });

  it.each([
    { flag: '--node-eviction-rate', value: '0', message: '--node-eviction-rate must be greater than 0' },
    { flag: '--node-eviction-rate', value: 'fast', message: '--node-eviction-rate must be a number greater than 0' },
    {
      flag: '--secondary-node-eviction-rate',
      value: '-0.5',
      message: '--secondary-node-eviction-rate must be at least 0',
    },
    {
      flag: '--unhealthy-zone-threshold',
      value: '1.5',
      message: '--unhealthy-zone-threshold must be at least 0 and at most 1',
    },
    {
      flag: '--large-cluster-size-threshold',
      value: '2.5',
      message: '--large-cluster-size-threshold must be a non-negative integer',
    },
  ])('refuse $flag $value with one line', async ({ flag, value, message }) => {
    const err = await parse(flag, value).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    const text = (err as Error).message;
    expect(text).toContain(message);
    expect(text.split('\n')).toHaveLength(1);
  });

  it('a good value gets past the flags (to the kubeconfig)', async () => {
    await expect(parse('--node-eviction-rate', '0.5', '--unhealthy-zone-threshold', '.6')).rejects.toThrow(
      /cannot load kubeconfig/,
    );
  });
});

describe('boundedNumber', () => {
  it.each(['1', '0.25', '.5', '1e-2', ' 3 '])('takes %j', (v) =>
    expect(boundedNumber('--x', { min: 0 })(v)).toBe(Number(v)),
  );
  it.each(['', 'x', '1x', 'NaN', 'Infinity', '0x10'])('refuses %j', (v) =>
    expect(() => boundedNumber('--x', { min: 0 })(v)).toThrow(/--x must be a number/),
  );
});
