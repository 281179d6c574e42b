import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import type { UserInfo } from './authz.js';

const CLIENT_AUTH_OID = '1.3.6.1.5.5.7.3.2';

/**
 * kube-apiserver's x509 authenticator: a client certificate that verified against --client-ca-file
 * and allows client authentication is the user of its subject's CN, in the groups of its O values.
 */
export function clientCertificateUser(socket: Socket): UserInfo | undefined {
  if (!(socket instanceof TLSSocket) || !socket.authorized) return undefined;
  const cert = socket.getPeerCertificate();
  if (!cert.ext_key_usage?.includes(CLIENT_AUTH_OID)) return undefined;
  const cn = cert.subject?.CN;
  const name = Array.isArray(cn) ? cn[0] : cn;
  if (!name) return undefined;
  const o: string | string[] | undefined = cert.subject.O;
  return { name, groups: o === undefined ? [] : Array.isArray(o) ? [...o] : [o] };
}
