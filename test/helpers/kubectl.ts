/** kubectl against a `stowage up`, for tests that drive it as a user would. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface Kubectl {
  /** kubectl's environment: the up's admin kubeconfig, and HOME in its data dir (kubectl's cache stays there). */
  env(): NodeJS.ProcessEnv;
  /** Runs kubectl; resolves to its stdout, rejects when it fails. */
  kubectl(...args: string[]): Promise<string>;
  /** Runs kubectl with `-o json` and parses what it printed. */
  json<T = any>(...args: string[]): Promise<T>;
}

/** kubectl for the `stowage up` whose data dir `dataDir()` returns (read at each call: set in beforeAll). */
export function kubectlIn(dataDir: () => string, timeoutMs = 90_000): Kubectl {
  const env = (): NodeJS.ProcessEnv => ({ ...process.env, KUBECONFIG: join(dataDir(), 'kubeconfig'), HOME: dataDir() });
  const kubectl = async (...args: string[]): Promise<string> =>
    (await promisify(execFile)('kubectl', args, { env: env(), timeout: timeoutMs })).stdout;
  return { env, kubectl, json: async (...args) => JSON.parse(await kubectl(...args, '-o', 'json')) };
}
