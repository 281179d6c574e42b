/** `stowage why pvc/NAME -n NS` (pod/…, pv/…, volumeattachment/…): the API's explanation in sentences. */
import type { Command } from 'commander';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { RestClient } from '../client/rest.js';
import {
  EXPLAINABLE,
  renderExplanation,
  type ExplainablePlural,
  type Explanation,
  type ObjectRef,
} from '../explain/index.js';
import { EXPLAIN_API_VERSION } from '../explain/types.js';
import { CliError } from './errors.js';
import { loadKubeconfigOrFail } from './kubeconfig.js';

const ALIASES: Readonly<Record<string, ExplainablePlural>> = {
  pvc: 'persistentvolumeclaims',
  persistentvolumeclaim: 'persistentvolumeclaims',
  persistentvolumeclaims: 'persistentvolumeclaims',
  po: 'pods',
  pod: 'pods',
  pods: 'pods',
  pv: 'persistentvolumes',
  persistentvolume: 'persistentvolumes',
  persistentvolumes: 'persistentvolumes',
  va: 'volumeattachments',
  volumeattachment: 'volumeattachments',
  volumeattachments: 'volumeattachments',
};

const PLURAL_OF_KIND: Readonly<Record<string, ExplainablePlural>> = Object.fromEntries(
  Object.entries(EXPLAINABLE).map(([plural, d]) => [d.kind, plural as ExplainablePlural]),
);

/** `pvc/data` → the plural and name; a one-line error for anything else. */
export function parseWhyTarget(arg: string): { plural: ExplainablePlural; name: string } {
  const m = /^([a-z]+)\/([^/]+)$/.exec(arg);
  const plural = m ? ALIASES[m[1]!] : undefined;
  if (!m || !plural)
    throw new CliError(
      `cannot explain ${JSON.stringify(arg)}: expected pvc/NAME, pod/NAME, pv/NAME or volumeattachment/NAME`,
    );
  return { plural, name: m[2]! };
}

export function explanationPath(plural: ExplainablePlural, namespace: string, name: string): string {
  const scope = EXPLAINABLE[plural].namespaced ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `/apis/${EXPLAIN_API_VERSION}${scope}/${plural}/${encodeURIComponent(name)}`;
}

async function fetchExplanation(
  client: RestClient,
  plural: ExplainablePlural,
  ns: string,
  name: string,
): Promise<Explanation> {
  return (await client.http.json({ method: 'GET', path: explanationPath(plural, ns, name) })) as Explanation;
}

interface WhyFlags {
  namespace: string;
  kubeconfig?: string;
  output: string;
  related: boolean;
  calls?: boolean;
}

/** One CSI call as the csicalls API lists it (the fields printed). */
export interface CsiCallRow {
  time: string;
  durationSeconds: number;
  method: string;
  caller: string;
  driver: string;
  code: string;
  error?: string;
}

const CALL_QUERY: Partial<Record<ExplainablePlural, string>> = {
  persistentvolumeclaims: 'claim',
  pods: 'pod',
  persistentvolumes: 'pv',
};

async function fetchCalls(
  client: RestClient,
  plural: ExplainablePlural,
  ns: string,
  name: string,
): Promise<CsiCallRow[]> {
  const key = CALL_QUERY[plural];
  if (!key) throw new CliError('--calls lists the CSI calls of a pvc, pod or pv');
  const scoped = EXPLAINABLE[plural].namespaced ? `&namespace=${encodeURIComponent(ns)}` : '';
  const list = (await client.http.json({
    method: 'GET',
    path: `/apis/${EXPLAIN_API_VERSION}/csicalls?${key}=${encodeURIComponent(name)}${scoped}`,
  })) as { items: CsiCallRow[] };
  return list.items;
}

/** The calls as lines: time, duration, caller, method, status (and the driver's message). */
export function renderCalls(calls: readonly CsiCallRow[]): string {
  if (calls.length === 0) return '\nCSI calls: none kept for it.\n';
  const lines = calls.map((c) => {
    const ms = `${Math.round(c.durationSeconds * 1000)}ms`.padStart(7);
    const err = c.error ? `: ${c.error}` : '';
    return `  ${c.time} ${ms} ${c.caller.padEnd(16)} ${c.method.split('/')[2] ?? c.method} ${c.code}${err}`;
  });
  return `\nCSI calls (${calls[0]?.driver ?? ''}):\n${lines.join('\n')}\n`;
}

export function whyCommand(program: Command): void {
  program
    .command('why <object>')
    .description(
      'explain why a claim, pod, volume or attachment is where it is (pvc/NAME, pod/NAME, pv/NAME, volumeattachment/NAME)',
    )
    .option('-n, --namespace <ns>', 'namespace of a claim or pod', 'default')
    .option('--kubeconfig <path>', 'kubeconfig (default: $KUBECONFIG, then ~/.kube/config)')
    .option('-o, --output <format>', 'text or json', 'text')
    .option('--no-related', 'do not also explain the related objects that are not ready')
    .option('--calls', 'also list the CSI calls made for it (claims, pods, volumes)')
    .action(async (arg: string, f: WhyFlags) => {
      if (f.output !== 'text' && f.output !== 'json')
        throw new CliError(`--output must be text or json, not ${f.output}`);
      const { plural, name } = parseWhyTarget(arg);
      const path = f.kubeconfig ?? process.env.KUBECONFIG?.split(':')[0] ?? join(homedir(), '.kube', 'config');
      const client = new RestClient({ ...(await loadKubeconfigOrFail(path)), userAgent: 'stowage-why' });
      try {
        const first = await fetchExplanation(client, plural, f.namespace, name).catch((e: unknown) => {
          throw new CliError(e instanceof Error ? e.message : String(e));
        });
        const all = [first];
        if (f.related && !first.ready) {
          for (const r of first.related ?? []) {
            const p = relatedPlural(r);
            if (!p) continue;
            const e = await fetchExplanation(client, p, r.namespace ?? '', r.name).catch(() => undefined);
            if (e && !e.ready) all.push(e);
          }
        }
        const calls = f.calls ? await fetchCalls(client, plural, f.namespace, name) : undefined;
        process.stdout.write(
          f.output === 'json'
            ? `${JSON.stringify(calls ? { explanations: all, csiCalls: calls } : all.length === 1 ? first : all, null, 2)}\n`
            : all.map(renderExplanation).join('\n') + (calls ? renderCalls(calls) : ''),
        );
      } finally {
        client.close();
      }
    });
}

function relatedPlural(r: ObjectRef): ExplainablePlural | undefined {
  return PLURAL_OF_KIND[r.kind];
}
