/** `stowage up` as a child process for end-to-end tests: started, waited for, its admin target read. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN } from './env.js';
import type { Target } from './http.js';

export interface RunningUp {
  readonly child: ChildProcess;
  readonly target: Target;
  /** Resolves with the exit code once the process has exited. */
  readonly exit: Promise<number | null>;
  readonly kubeconfigPath: string;
}

export interface StartUpOptions {
  /**
   * Let `up` run pods' containers (an embedded containerd when it is on PATH). Off by default:
   * storage tests run volume-only pods, whatever the machine has installed.
   */
  readonly runtime?: boolean;
  readonly stderr?: 'pipe' | 'inherit';
}

/** Starts `stowage up --port 0 --data-dir <dataDir> --node-name <nodeName> …extra` and waits until it serves. */
export async function startUp(
  dataDir: string,
  nodeName: string,
  extra: readonly string[] = [],
  o: StartUpOptions = {},
): Promise<RunningUp> {
  const args = [
    BIN,
    'up',
    '--port',
    '0',
    '--data-dir',
    dataDir,
    '--node-name',
    nodeName,
    ...(o.runtime ? [] : ['--no-container-runtime']),
    ...extra,
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', o.stderr ?? 'pipe'] });
  child.stderr?.resume();
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
  const kubeconfigPath = join(dataDir, 'kubeconfig');
  const kc = readFileSync(kubeconfigPath, 'utf8');
  const token = /token: (\S+)/.exec(kc)![1]!;
  const caPem = Buffer.from(/certificate-authority-data: (\S+)/.exec(kc)![1]!, 'base64').toString();
  return { child, exit, kubeconfigPath, target: { baseUrl: url, token, caPem } };
}
