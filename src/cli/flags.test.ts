import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registrarCommand } from './csi-registrar.js';
import { sidecarCommand } from './csi-sidecar.js';
import { formatDuration, parseDuration } from './flags.js';
import { nodeCommand } from './node.js';
import { upCommand } from './up.js';
import { controllersCommand } from './controllers.js';

describe('durations', () => {
  it.each([
    [0, '0s'],
    [500, '500ms'],
    [1_000, '1s'],
    [1_500, '1.5s'],
    [15_000, '15s'],
    [60_000, '1m0s'],
    [122_000, '2m2s'],
    [3_600_000, '1h0m0s'],
  ])('%i ms prints as Go does: %s, and parses back', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
    expect(parseDuration(text)).toBe(ms);
  });

  it('--help shows every <duration> default as a duration (15s), never as milliseconds', () => {
    const program = new Command();
    for (const add of [upCommand, controllersCommand, nodeCommand, sidecarCommand, registrarCommand]) add(program);
    for (const cmd of program.commands) {
      for (const line of cmd
        .helpInformation()
        .split('\n')
        .filter((l) => l.includes('<duration>'))) {
        const d = /\(default: ([^)]*)\)/.exec(line)?.[1];
        if (d !== undefined) expect(d, `${cmd.name()}: ${line.trim()}`).toMatch(/^"?(\d+(\.\d+)?(ms|s|m|h))+"?$/);
      }
    }
  });
});
