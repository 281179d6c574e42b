import { describe, it, expect } from 'vitest';
import { Command } from 'commander';
import { parseDuration, registrarCommand } from './command.js';
import { parseHostPort } from './healthz.js';
import { pluginInfo } from './service.js';

describe('parseDuration', () => {
  it.each([
    { in: '1s', want: 1_000 },
    { in: '500ms', want: 500 },
    { in: '2m', want: 120_000 },
    { in: '1m30s', want: 90_000 },
    { in: '1.5s', want: 1_500 },
  ])('$in → $want', ({ in: s, want }) => expect(parseDuration(s)).toBe(want));
  it.each(['', '1', 's', '1x', '1s junk', 'x1s'])('rejects %j', (s) => expect(() => parseDuration(s)).toThrow(/not a duration/));
});

describe('parseHostPort', () => {
  it.each([
    { in: ':9809', want: { port: 9809 } },
    { in: '127.0.0.1:0', want: { host: '127.0.0.1', port: 0 } },
    { in: '[::1]:80', want: { host: '::1', port: 80 } },
  ])('$in', ({ in: s, want }) => expect(parseHostPort(s)).toEqual(want));
  it.each(['9809', 'h:99999', 'h:x'])('rejects %j', (s) => expect(() => parseHostPort(s)).toThrow());
});

describe('pluginInfo', () => {
  it('is what node-driver-registrar returns from GetInfo', () => {
    expect(pluginInfo({ driverName: 'd.example.com', kubeletRegistrationPath: '/var/lib/kubelet/plugins/d/csi.sock' })).toEqual({
      type: 'CSIPlugin',
      name: 'd.example.com',
      endpoint: '/var/lib/kubelet/plugins/d/csi.sock',
      supportedVersions: ['1.0.0'],
    });
  });
});

describe('csi-registrar command', () => {
  it('requires the upstream flags', async () => {
    const program = new Command().exitOverride().configureOutput({ writeErr: () => undefined });
    registrarCommand(program);
    program.commands[0]?.exitOverride().configureOutput({ writeErr: () => undefined });
    await expect(program.parseAsync(['node', 'stowage', 'csi-registrar', '--csi-address', '/x.sock'])).rejects.toMatchObject({
      code: 'commander.missingMandatoryOptionValue',
    });
  });
});
