import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { arch, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pauseElf } from './elf.js';

const dir = mkdtempSync(join(tmpdir(), 'stowage-pause-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Starts the program, waits until it sleeps in pause(2), sends `signal`; resolves with how it ended. */
async function endWith(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const path = join(dir, 'pause');
  writeFileSync(path, pauseElf());
  chmodSync(path, 0o755);
  const child = spawn(path, [], { stdio: 'ignore' });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, sig) => resolve({ code, signal: sig })),
  );
  // Positive signal that the handlers are installed: the process is asleep in pause (state S, wchan).
  await expect
    .poll(
      () => {
        try {
          return readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]?.[0];
        } catch {
          return undefined;
        }
      },
      { timeout: 10_000 },
    )
    .toBe('S');
  child.kill(signal);
  return exit;
}

describe.skipIf(process.platform !== 'linux' || arch() !== 'x64')('the shipped pause program (linux/amd64)', () => {
  it('is a small static ELF', () => {
    const elf = pauseElf();
    expect(elf.subarray(0, 4)).toEqual(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
    expect(elf.length).toBeLessThan(512);
  });
  it.each(['SIGTERM', 'SIGINT'] as const)('waits, then exits 0 on %s', async (sig) => {
    expect(await endWith(sig)).toEqual({ code: 0, signal: null });
  });
});
