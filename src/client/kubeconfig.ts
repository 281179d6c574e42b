import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parse } from 'yaml';
import { BadRequestError } from '../util/errors.js';
import type { RestConfig } from './http.js';

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

function named(list: unknown, name: string, what: string, key: string): Rec {
  const found = Array.isArray(list) ? list.filter(isRec).find((e) => e.name === name) : undefined;
  const inner = found?.[key];
  if (!isRec(inner)) throw new BadRequestError(`kubeconfig: ${what} ${JSON.stringify(name)} not found`);
  return inner;
}

/**
 * Reads a kubeconfig (YAML) and returns the REST config of its current context (or `context`):
 * the cluster's server and CA (certificate-authority-data or a certificate-authority file,
 * insecure-skip-tls-verify) and the user's bearer token (token or tokenFile) and/or client
 * certificate (client-certificate[-data], client-key[-data]).
 */
export async function loadKubeconfig(path: string, context?: string): Promise<RestConfig> {
  const doc: unknown = parse(await readFile(path, 'utf8'));
  if (!isRec(doc)) throw new BadRequestError(`kubeconfig ${path}: not a YAML mapping`);
  const ctxName = context ?? str(doc['current-context']);
  if (!ctxName) throw new BadRequestError(`kubeconfig ${path}: no current-context`);
  const ctx = named(doc.contexts, ctxName, 'context', 'context');
  const cluster = named(doc.clusters, str(ctx.cluster) ?? '', 'cluster', 'cluster');
  const user = named(doc.users, str(ctx.user) ?? '', 'user', 'user');
  const server = str(cluster.server);
  if (!server) throw new BadRequestError(`kubeconfig ${path}: cluster has no server`);
  const base = dirname(path);
  let caPem: string | undefined;
  const caData = str(cluster['certificate-authority-data']);
  const caFile = str(cluster['certificate-authority']);
  if (caData) caPem = Buffer.from(caData, 'base64').toString('utf8');
  else if (caFile) caPem = await readFile(resolve(base, caFile), 'utf8');
  let token = str(user.token);
  const tokenFile = str(user.tokenFile);
  if (!token && tokenFile) token = (await readFile(resolve(base, tokenFile), 'utf8')).trim();
  const pem = async (dataKey: string, fileKey: string): Promise<string | undefined> => {
    const data = str(user[dataKey]);
    if (data) return Buffer.from(data, 'base64').toString('utf8');
    const file = str(user[fileKey]);
    return file ? readFile(resolve(base, file), 'utf8') : undefined;
  };
  const certPem = await pem('client-certificate-data', 'client-certificate');
  const keyPem = await pem('client-key-data', 'client-key');
  if ((certPem === undefined) !== (keyPem === undefined))
    throw new BadRequestError(`kubeconfig ${path}: a client certificate needs its key and a key its certificate`);
  if (!token && !certPem)
    throw new BadRequestError(`kubeconfig ${path}: user has neither a token nor a client certificate`);
  return { server, token, certPem, keyPem, caPem, insecure: cluster['insecure-skip-tls-verify'] === true };
}
