/**
 * /healthz, /livez and /readyz as kube-apiserver serves them: each endpoint runs named checks;
 * `?verbose` lists them (`[+]ping ok` … `readyz check passed`), `?exclude=<name>` skips one, and
 * `/<endpoint>/<check>` runs a single check.
 */
import type { ServerResponse } from 'node:http';
import { sendRaw } from './http.js';

/** One named check; resolves when healthy, rejects with the reason otherwise. */
export interface HealthCheck {
  readonly name: string;
  check(): Promise<void>;
}

export type HealthEndpoint = 'healthz' | 'livez' | 'readyz';

const TEXT = { contentType: 'text/plain; charset=utf-8', headers: { 'X-Content-Type-Options': 'nosniff' } } as const;

async function passes(c: HealthCheck): Promise<boolean> {
  try {
    await c.check();
    return true;
  } catch {
    return false;
  }
}

/** Answers the whole endpoint: 200 `ok` (or the verbose list), 500 naming each failed check. */
export async function serveHealth(
  res: ServerResponse,
  endpoint: HealthEndpoint,
  checks: readonly HealthCheck[],
  query: URLSearchParams,
): Promise<void> {
  const excluded = new Set(query.getAll('exclude').flatMap((e) => e.split(',')));
  const lines: string[] = [];
  let failed = false;
  for (const c of checks) {
    if (excluded.has(c.name)) {
      lines.push(`[+]${c.name} excluded: ok`);
      continue;
    }
    if (await passes(c)) lines.push(`[+]${c.name} ok`);
    else {
      // kube-apiserver withholds the reason from the HTTP answer (it only logs it).
      lines.push(`[-]${c.name} failed: reason withheld`);
      failed = true;
    }
  }
  if (failed) return sendRaw(res, 500, `${lines.map((l) => `${l}\n`).join('')}${endpoint} check failed\n`, TEXT);
  if (!query.has('verbose')) return sendRaw(res, 200, 'ok', TEXT);
  sendRaw(res, 200, `${lines.map((l) => `${l}\n`).join('')}${endpoint} check passed\n`, TEXT);
}

/** Answers `/<endpoint>/<name>`: `ok`, or 500 with the check's error. */
export async function serveHealthCheck(res: ServerResponse, check: HealthCheck): Promise<void> {
  try {
    await check.check();
  } catch (e) {
    return sendRaw(res, 500, `internal server error: ${e instanceof Error ? e.message : String(e)}\n`, TEXT);
  }
  sendRaw(res, 200, 'ok', TEXT);
}
