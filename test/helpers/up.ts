/** `stowage up` as a child process, for end-to-end tests: resolves once its API server answers. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN } from './env.js';
import type { Target } from './http.js';

export interface RunningUp {
  readonly child: ChildProcess;
  readonly target: Target;
  readonly exit: Promise<number | null>;
}

export async function startUp(dataDir: string, args: readonly string[], stderr: 'pipe' | 'inherit' = 'pipe'): Promise<RunningUp> {
  const child = spawn(process.execPath, [BIN, 'up', '--port', '0', '--data-dir', dataDir, ...args], { stdio: ['ignore', 'pipe', stderr] });
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const url = await new Promise<string>((res, rej) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /API server (https:\/\/\S+),/.exec(out);
      if (m) res(m[1]!);
    });
    void exit.then((code) => rej(new Error(`stowage up exited with ${code}`)));
  });
  const kc = readFileSync(join(dataDir, 'kubeconfig'), 'utf8');
  const token = /token: (\S+)/.exec(kc)![1]!;
  const caPem = Buffer.from(/certificate-authority-data: (\S+)/.exec(kc)![1]!, 'base64').toString();
  return { child, exit, target: { baseUrl: url, token, caPem } };
}
