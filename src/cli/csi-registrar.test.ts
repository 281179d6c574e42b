import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registrarCommand } from './csi-registrar.js';
import { parseDuration } from './flags.js';

describe('parseDuration', () => {
  it.each([
    { in: '1s', want: 1_000 },
    { in: '500ms', want: 500 },
    { in: '2m', want: 120_000 },
    { in: '1m30s', want: 90_000 },
    { in: '1.5s', want: 1_500 },
  ])('$in → $want', ({ in: s, want }) => expect(parseDuration(s)).toBe(want));
  it.each(['', '1', 's', '1x', '1s junk', 'x1s'])('rejects %j', (s) =>
    expect(() => parseDuration(s)).toThrow(/not a duration/),
  );
});

describe('csi-registrar command', () => {
  it('requires the upstream flags', async () => {
    const program = new Command().exitOverride().configureOutput({ writeErr: () => undefined });
    registrarCommand(program);
    program.commands[0]?.exitOverride().configureOutput({ writeErr: () => undefined });
    await expect(
      program.parseAsync(['node', 'stowage', 'csi-registrar', '--csi-address', '/x.sock']),
    ).rejects.toMatchObject({
      code: 'commander.missingMandatoryOptionValue',
    });
  });
});
