import { randomBytes } from 'node:crypto';
import type { Secret } from 'kubernetes-types/core/v1.js';
import type { RestClient } from '../client/rest.js';
import { AlreadyExistsError } from '../util/errors.js';
import {
  formatNodeToken,
  NODE_TOKEN_NAMESPACE,
  NODE_TOKEN_SECRET_KEY,
  NODE_TOKEN_SECRET_TYPE,
  nodeTokenSecretName,
} from '../kube/nodetoken.js';
import { CliError } from './errors.js';

/**
 * The bearer token of node `nodeName`: its Secret's, creating the Secret on first use (the same
 * node asked twice gets the same token; delete the Secret to revoke it). Needs a credential that
 * may create and read Secrets in kube-system (the admin's).
 */
export async function ensureNodeToken(client: RestClient, nodeName: string, signal?: AbortSignal): Promise<string> {
  const api = client.resource('Secret');
  const name = nodeTokenSecretName(nodeName);
  const secretOf = (s: Secret): string => {
    if (s.type !== NODE_TOKEN_SECRET_TYPE)
      throw new CliError(`secret ${NODE_TOKEN_NAMESPACE}/${name} exists but is not of type ${NODE_TOKEN_SECRET_TYPE}`);
    const v = s.data?.[NODE_TOKEN_SECRET_KEY];
    if (!v) throw new CliError(`secret ${NODE_TOKEN_NAMESPACE}/${name} has no ${NODE_TOKEN_SECRET_KEY}`);
    return Buffer.from(v, 'base64').toString('utf8');
  };
  const fresh = randomBytes(24).toString('base64url');
  const secret: Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: NODE_TOKEN_NAMESPACE },
    type: NODE_TOKEN_SECRET_TYPE,
    data: { [NODE_TOKEN_SECRET_KEY]: Buffer.from(fresh).toString('base64') },
  };
  try {
    await api.create(secret, { namespace: NODE_TOKEN_NAMESPACE, signal });
    return formatNodeToken(nodeName, fresh);
  } catch (e) {
    if (!(e instanceof AlreadyExistsError)) throw e;
  }
  return formatNodeToken(nodeName, secretOf(await api.get(name, { namespace: NODE_TOKEN_NAMESPACE, signal })));
}
