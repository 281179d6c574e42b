import { loadKubeconfig } from '../client/kubeconfig.js';
import type { RestConfig } from '../client/rest.js';
import { CliError } from './errors.js';

/** The kubeconfig at `path`, or a one-line CliError naming it. */
export async function loadKubeconfigOrFail(path: string): Promise<RestConfig> {
  try {
    return await loadKubeconfig(path);
  } catch (e) {
    throw new CliError(`cannot load kubeconfig ${path}: ${e instanceof Error ? e.message : String(e)}`);
  }
}
