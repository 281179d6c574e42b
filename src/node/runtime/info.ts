/** What the node agent knows of its container runtime, for the Node's status and the pods' events. */
import { CriClient } from './client.js';

export type ContainerRuntimeInfo =
  | { readonly kind: 'none' }
  | {
      readonly kind: 'cri';
      readonly endpoint: string;
      readonly name: string;
      readonly version: string;
      /** Why the runtime is down (its Status call failed or RuntimeReady is false); absent while it is up. */
      readonly down?: string;
    };

export const NO_RUNTIME: ContainerRuntimeInfo = { kind: 'none' };

/** The Node condition (a node-problem-detector style type: True means the problem is present). */
export const RUNTIME_CONDITION = 'ContainerRuntimeUnavailable';

/** `nodeInfo.containerRuntimeVersion` as the kubelet writes it: `<name>://<version>`. */
export function runtimeVersionString(r: ContainerRuntimeInfo): string {
  return r.kind === 'cri' ? `${r.name}://${r.version}` : '';
}

/** Connects to the runtime at `endpoint` and reads its name and version; rejects with a CriError when it does not answer. */
export async function connectRuntime(
  endpoint: string,
  timeoutMs = 10_000,
): Promise<{ client: CriClient; info: ContainerRuntimeInfo }> {
  const client = new CriClient({ endpoint });
  try {
    await client.connect(timeoutMs);
    const v = await client.version({ timeoutMs });
    return { client, info: { kind: 'cri', endpoint: client.endpoint, name: v.runtimeName, version: v.runtimeVersion } };
  } catch (e) {
    client.close();
    throw e;
  }
}
