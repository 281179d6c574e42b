/** deploy/systemd: every unit runs a stowage command with flags that command accepts, and is restarted. */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, built, ROOT } from './helpers/env.js';

const DIR = join(ROOT, 'deploy', 'systemd');
const units = readdirSync(DIR).filter((f) => f.endsWith('.service'));

describe.skipIf(!built)('deploy/systemd units', () => {
  it('ships one unit per scale-out command', () => {
    const commands = units.map((u) => /^ExecStart=\S+ (\S+)/m.exec(readFileSync(join(DIR, u), 'utf8'))?.[1]);
    expect(commands.sort()).toEqual(['controllers', 'csi-hostpath', 'csi-registrar', 'csi-sidecar', 'node', 'server']);
  });

  it.each(units)('%s: its flags exist, it restarts, and its env file is named', (unit) => {
    const text = readFileSync(join(DIR, unit), 'utf8');
    const exec = /^ExecStart=(.*)$/m.exec(text)?.[1] ?? '';
    const [bin, command, ...args] = exec.split(/\s+/);
    expect(bin).toBe('/usr/local/bin/stowage');
    const help = execFileSync(process.execPath, [BIN, command ?? '', '--help'], { encoding: 'utf8' });
    for (const flag of args.filter((a) => a.startsWith('--'))) expect(help, `${unit}: ${flag}`).toContain(`${flag} `);
    expect(text).toMatch(/^Restart=always$/m);
    expect(text).toMatch(/^EnvironmentFile=\/etc\/stowage\/\S+\.env$/m);
    // $SERVERS (the --server list) is offered to every component that talks to the API servers.
    if (['controllers', 'csi-sidecar', 'node'].includes(command ?? '')) expect(args).toContain('$SERVERS');
  });
});
