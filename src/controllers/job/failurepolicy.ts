/**
 * A Job's podFailurePolicy (v1.30, JobPodFailurePolicy): the first rule matching a failed pod —
 * by a container's exit code or by a pod condition — decides whether the failure fails the Job
 * (FailJob), is not counted against backoffLimit (Ignore), or counts as usual (Count). Pure.
 */
import type { Job, PodFailurePolicyRule } from 'kubernetes-types/batch/v1.js';
import type { Pod } from 'kubernetes-types/core/v1.js';

export type FailureVerdict =
  | { readonly action: 'FailJob'; readonly message: string }
  | { readonly action: 'Ignore' }
  | { readonly action: 'Count' };

function exitCodeMatch(rule: PodFailurePolicyRule, pod: Pod): { container: string; code: number } | undefined {
  const req = rule.onExitCodes;
  if (!req) return undefined;
  for (const s of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
    const code = s.state?.terminated?.exitCode;
    if (code === undefined || code === 0) continue; // exit code 0 never matches (the API forbids it in In)
    if (req.containerName && req.containerName !== s.name) continue;
    const listed = req.values.includes(code);
    if ((req.operator === 'In' && listed) || (req.operator === 'NotIn' && !listed)) return { container: s.name, code };
  }
  return undefined;
}

function conditionMatch(rule: PodFailurePolicyRule, pod: Pod): string | undefined {
  for (const want of rule.onPodConditions ?? []) {
    if ((pod.status?.conditions ?? []).some((c) => c.type === want.type && c.status === (want.status ?? 'True')))
      return want.type;
  }
  return undefined;
}

/** What the policy makes of failed `pod`; Count when no rule matches or there is no policy. */
export function failureVerdict(job: Job, pod: Pod): FailureVerdict {
  const rules = job.spec?.podFailurePolicy?.rules ?? [];
  const who = `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
  for (const [i, rule] of rules.entries()) {
    const exit = exitCodeMatch(rule, pod);
    const cond = exit ? undefined : conditionMatch(rule, pod);
    if (!exit && !cond) continue;
    if (rule.action === 'Ignore') return { action: 'Ignore' };
    if (rule.action === 'Count' || rule.action === 'FailIndex') return { action: 'Count' };
    const message = exit
      ? `Container ${exit.container} for pod ${who} failed with exit code ${exit.code} matching FailJob rule at index ${i}`
      : `Pod ${who} has condition ${cond} matching FailJob rule at index ${i}`;
    return { action: 'FailJob', message };
  }
  return { action: 'Count' };
}
