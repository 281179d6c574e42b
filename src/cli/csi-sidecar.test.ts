import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { parsePositiveDuration as parseDuration } from './flags.js';
import { sidecarCommand } from './csi-sidecar.js';

describe('parseDuration', () => {
  it.each([
    ['15s', 15_000],
    ['500ms', 500],
    ['2m', 120_000],
    ['1m30s', 90_000],
  ])('%s → %d ms', (v, ms) => expect(parseDuration(v)).toBe(ms));
  it.each(['', 'abc', '3', '0s'])('refuses %j', (v) => expect(() => parseDuration(v)).toThrow());
});

describe('sidecarCommand', () => {
  it('requires --csi-address and --kubeconfig', async () => {
    const program = new Command().exitOverride().configureOutput({ writeErr: () => undefined });
    sidecarCommand(program);
    await expect(program.parseAsync(['node', 'stowage', 'csi-sidecar', '--kubeconfig', 'k'])).rejects.toThrow(
      /--csi-address/,
    );
  });
  it('fails with one line for an unreadable kubeconfig', async () => {
    const program = new Command().exitOverride();
    sidecarCommand(program);
    await expect(
      program.parseAsync([
        'node',
        'stowage',
        'csi-sidecar',
        '--csi-address',
        '/nonexistent.sock',
        '--kubeconfig',
        '/nonexistent',
      ]),
    ).rejects.toThrow(/cannot load kubeconfig/);
  });
});
