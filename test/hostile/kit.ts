/**
 * A bare API server for hostile-input tests: real HTTPS, an admin (system:masters) token and an
 * ordinary user's token (the one in-flight limits apply to), chosen limits, and raw clients that
 * can misbehave (slow, huge, half-sent) on one keep-alive connection.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { startApiServer, type ApiServer } from '../../src/api/server.js';
import type { ConnectionLimits } from '../../src/api/connections.js';
import type { RequestLimits } from '../../src/api/limits.js';
import { ensureServingMaterial } from '../../src/api/tls.js';
import { ADMIN_POLICY, newGroupRulesAuthorizer } from '../../src/api/authz.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';
import { readResponse, type RawResponse } from '../helpers/http.js';

export interface HostileServer {
  readonly api: ApiServer;
  readonly url: URL;
  readonly caPem: string;
  /** The CA certificate as a file (for clients configured by path, e.g. NODE_EXTRA_CA_CERTS). */
  readonly caFile: string;
  readonly adminToken: string;
  /** A user outside system:masters: in-flight limits apply to it. */
  readonly userToken: string;
  close(): Promise<void>;
}

const WRITERS = 'stowage-test:writers';

export async function startHostileServer(
  limits: Partial<RequestLimits & ConnectionLimits> = {},
): Promise<HostileServer> {
  const dir = mkdtempSync(join(tmpdir(), 'stowage-hostile-'));
  const pki = ensureServingMaterial(join(dir, 'pki'), ['127.0.0.1']);
  const store: Store = openSqliteStore({ path: join(dir, 'stowage.db') });
  const userToken = 'hostile-user-token';
  const api = await startApiServer({
    store,
    address: '127.0.0.1',
    port: 0,
    tls: { certPem: pki.certPem, keyPem: pki.keyPem },
    tokens: new Map([
      [pki.adminToken, { name: 'admin', groups: ['system:masters'] }],
      [userToken, { name: 'alice', groups: ['system:authenticated', WRITERS] }],
    ]),
    // alice is an ordinary user (not system:masters, so the in-flight limits apply to her) who may
    // do anything with resources, as an RBAC binding would let her.
    authorizer: newGroupRulesAuthorizer([
      ...ADMIN_POLICY,
      { group: WRITERS, resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], nonResourceRules: [] },
    ]),
    limits,
  });
  return {
    api,
    url: new URL(api.url),
    caPem: pki.caCertPem,
    caFile: join(dir, 'pki', 'ca.crt'),
    adminToken: pki.adminToken,
    userToken,
    close: async () => {
      await api.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Reply extends RawResponse {
  /** The local port of the connection that carried it (same port = same keep-alive connection). */
  readonly localPort: number;
}

export interface SendOptions {
  readonly token?: string | null;
  readonly contentType?: string;
  readonly headers?: Record<string, string>;
  readonly agent?: Agent;
}

/** A keep-alive agent holding a single connection: every request through it shares that socket while it lives. */
export function oneConnection(s: HostileServer): Agent {
  return new Agent({ ca: s.caPem, keepAlive: true, maxSockets: 1 });
}

const shared = new WeakMap<HostileServer, Agent>();

/** One request; bodies given as objects are sent as JSON, strings and Buffers as they are. */
export function send(
  s: HostileServer,
  method: string,
  path: string,
  body?: unknown,
  o: SendOptions = {},
): Promise<Reply> {
  let agent = o.agent ?? shared.get(s);
  if (!agent) shared.set(s, (agent = new Agent({ ca: s.caPem, keepAlive: true })));
  const payload =
    body === undefined
      ? undefined
      : Buffer.isBuffer(body)
        ? body
        : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  const token = o.token === undefined ? s.adminToken : o.token;
  const headers: Record<string, string> = {
    Accept: 'application/json',
    ...(token ? { Authorization: `Bearer ${token}` } : {}),
    ...o.headers,
  };
  if (payload) {
    headers['Content-Type'] = o.contentType ?? 'application/json';
    headers['Content-Length'] = String(payload.length);
  }
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, s.url), { method, headers, agent }, (res) => {
      readResponse(res).then((r) => resolve({ ...r, localPort: req.socket?.localPort ?? 0 }), reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** A raw TLS connection for requests no well-behaved client would send. */
export async function rawConnection(s: HostileServer): Promise<RawConnection> {
  const socket = connect({ host: s.url.hostname, port: Number(s.url.port), ca: s.caPem });
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', resolve);
    socket.once('error', reject);
  });
  return new RawConnection(socket);
}

export class RawConnection {
  private received = '';
  readonly closed: Promise<void>;
  constructor(readonly socket: TLSSocket) {
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (this.received += d));
    socket.on('error', () => undefined); // a reset is one of the outcomes tests look for
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
  }
  write(text: string | Buffer): void {
    this.socket.write(text);
  }
  /** Everything the server sent so far. */
  text(): string {
    return this.received;
  }
  /** Resolves with what was received once `pred` holds or the connection closed. */
  async until(pred: (text: string) => boolean): Promise<string> {
    while (!pred(this.received) && !this.socket.destroyed && this.socket.readable) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          this.socket.off('data', done);
          this.socket.off('close', done);
          resolve();
        };
        this.socket.on('data', done);
        this.socket.on('close', done);
      });
    }
    return this.received;
  }
  destroy(): void {
    this.socket.destroy();
  }
}

/** What a kind's collection holds: resourceVersions by name, to prove nothing was written. */
export async function snapshot(s: HostileServer, collectionPath: string): Promise<Record<string, string>> {
  const r = await send(s, 'GET', collectionPath);
  if (r.status !== 200) throw new Error(`list ${collectionPath}: ${r.status} ${r.text}`);
  const out: Record<string, string> = {};
  for (const item of r.body.items as Array<{
    metadata: { name: string; namespace?: string; resourceVersion: string };
  }>) {
    out[`${item.metadata.namespace ?? ''}/${item.metadata.name}`] = item.metadata.resourceVersion;
  }
  return out;
}

/** The server answers /readyz with 200 `ok`. */
export async function expectReady(s: HostileServer): Promise<void> {
  const r = await send(s, 'GET', '/readyz', undefined, { token: null });
  if (r.status !== 200 || r.text !== 'ok') throw new Error(`/readyz: ${r.status} ${r.text}`);
}
