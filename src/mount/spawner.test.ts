import { afterEach, describe, expect, it } from 'vitest';
import { MountError, run } from './exec.js';
import { execDirect, execOk, Spawner } from './spawner.js';

describe('spawner helper', () => {
  const spawners: Spawner[] = [];
  const newSpawner = (): Spawner => {
    const s = new Spawner();
    spawners.push(s);
    return s;
  };
  afterEach(() => {
    for (const s of spawners.splice(0)) s.close();
  });

  it('runs a program in the helper and reports what execFile would', async () => {
    const s = newSpawner();
    const direct = await execDirect('sh', ['-c', 'echo out; echo err >&2; exit 3'], 5_000);
    const viaHelper = await s.run('sh', ['-c', 'echo out; echo err >&2; exit 3'], 5_000);
    expect(viaHelper).toEqual(direct);
    expect(viaHelper).toMatchObject({
      stdout: 'out\n',
      stderr: 'err\n',
      exitCode: 3,
      errno: null,
      signal: null,
      killed: false,
    });
    expect(execOk(viaHelper)).toBe(false);
    const ok = await s.run('echo', ['a b', '$HOME'], 5_000);
    // Arguments arrive verbatim: no shell in between.
    expect(ok.stdout).toBe('a b $HOME\n');
    expect(execOk(ok)).toBe(true);
  });

  it('reports a program that cannot be started, and kills one that outlives its timeout', async () => {
    const s = newSpawner();
    expect(await s.run('/nonexistent/program', [], 5_000)).toMatchObject({ errno: 'ENOENT', exitCode: null });
    expect(await s.run('sleep', ['10'], 100)).toMatchObject({ killed: true, signal: 'SIGKILL', exitCode: null });
  });

  it('answers concurrent commands each with its own result', async () => {
    const s = newSpawner();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => s.run('sh', ['-c', `echo ${i}; exit ${i % 2}`], 5_000)),
    );
    expect(results.map((r) => [r.stdout.trim(), r.exitCode])).toEqual(
      Array.from({ length: 20 }, (_, i) => [String(i), i % 2]),
    );
  });

  it('reports what a dead helper was running as lost (never runs it twice) and starts a new helper for later commands', async () => {
    const s = newSpawner();
    const helperPid = Number((await s.run('sh', ['-c', 'echo $PPID'], 5_000)).stdout.trim());
    expect(helperPid).not.toBe(process.pid);
    const inFlight = s.run('sleep', ['0.2'], 5_000);
    process.kill(helperPid, 'SIGKILL');
    const r = await inFlight;
    expect(r.lost).toBe(true);
    expect(execOk(r)).toBe(false);
    const next = Number((await s.run('sh', ['-c', 'echo $PPID'], 5_000)).stdout.trim());
    expect(next).not.toBe(helperPid);
    expect(next).not.toBe(process.pid);
  });

  it('keeps serving through the SIGINT and SIGTERM a Ctrl-C sends the whole process group: it exits only with us', async () => {
    const s = newSpawner();
    const helperPid = Number((await s.run('sh', ['-c', 'echo $PPID'], 5_000)).stdout.trim());
    // The program signals its parent, the helper, and ends only after the signals were sent.
    const signalled = await s.run('sh', ['-c', 'kill -INT $PPID && kill -TERM $PPID && echo sent'], 5_000);
    expect(signalled).toMatchObject({ stdout: 'sent\n', exitCode: 0 });
    expect(signalled.lost).toBeUndefined();
    expect(Number((await s.run('sh', ['-c', 'echo $PPID'], 5_000)).stdout.trim())).toBe(helperPid);
  });
});

describe('run', () => {
  it('resolves with stdout, and turns failures into one-line MountErrors', async () => {
    expect(await run('echo', ['hi'])).toBe('hi\n');
    const failed = await run('sh', ['-c', 'echo nope >&2; exit 2']).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(MountError);
    expect((failed as MountError).message).toBe('sh -c echo nope >&2; exit 2: exit code 2: nope');
    expect((failed as MountError).exitCode).toBe(2);
    expect(((await run('/nonexistent/x', []).catch((e: unknown) => e)) as Error).message).toBe(
      '/nonexistent/x: cannot run: ENOENT',
    );
    expect(((await run('sleep', ['5'], { timeoutMs: 50 }).catch((e: unknown) => e)) as Error).message).toBe(
      'sleep 5: timed out or killed after 50 ms (SIGKILL)',
    );
  });
});
