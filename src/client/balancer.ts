/**
 * The client-side balancer over several API servers (what the k3s agent's load balancer does for
 * its kubelet and kube-proxy): requests go to the current server; a server that cannot be reached
 * makes the next one current, so that one live server keeps every component working without an
 * operator. All servers share the certificate authority and credentials of the client's config.
 */

/** Connection-level failures where the request was never received: safe to send elsewhere, any verb. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'ENOTFOUND']);
/** The connection broke before an answer: a GET (idempotent) may be sent again elsewhere. */
const BROKEN = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED']);

/** Whether `e` (from sending a request, before any answer) lets the request be sent to another server. */
export function canFailOver(e: unknown, method: string): boolean {
  const code = e instanceof Error ? (e as NodeJS.ErrnoException).code : undefined;
  if (code === undefined) return false;
  return UNREACHABLE.has(code) || (method === 'GET' && BROKEN.has(code));
}

/** The ordered servers and which one is current. Synchronous; shared by a transport's requests. */
export class ServerList {
  private readonly urls: readonly URL[];
  private index = 0;

  constructor(servers: readonly string[]) {
    if (servers.length === 0) throw new Error('a server list needs at least one server');
    this.urls = servers.map((s) => new URL(s));
  }

  get size(): number {
    return this.urls.length;
  }

  current(): URL {
    return this.urls[this.index % this.urls.length]!;
  }

  /**
   * `failed` could not be reached: the next server becomes current. Concurrent requests that
   * failed on the same server move the list on only once.
   */
  failed(failed: URL): void {
    if (this.current().href === failed.href) this.index = (this.index + 1) % this.urls.length;
  }
}

/** `--server` values: each flag may itself list several URLs separated by commas. */
export function parseServerList(values: readonly string[]): string[] {
  return values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
}
