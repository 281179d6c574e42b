/**
 * Lifecycle hooks (postStart, preStop) as the kubelet runs them: the handler against the container,
 * and on failure the kubelet's message for the FailedPostStartHook / FailedPreStopHook event.
 */
import type { Container, LifecycleHandler, Pod } from 'kubernetes-types/core/v1.js';
import { runHandler, type HandlerOutcome, type HandlerTarget } from './prober/handlers.js';

/** `name_namespace(uid)`, the kubelet's format.Pod. */
export function podDescription(pod: Pod): string {
  const m = pod.metadata ?? {};
  return `${m.name ?? ''}_${m.namespace ?? 'default'}(${m.uid ?? ''})`;
}

/** The event message for a failed hook, worded as the kubelet's handlers.go. */
export function hookFailureMessage(pod: Pod, c: Container, h: LifecycleHandler, out: HandlerOutcome): string {
  if (h.exec) {
    const cmd = h.exec.command ?? [];
    return `Exec lifecycle hook ([${cmd.join(' ')}]) for Container ${JSON.stringify(c.name)} in Pod ${JSON.stringify(podDescription(pod))} failed - error: command '${cmd.join(' ')}' exited with non-zero status, message: ${JSON.stringify(out.output)}`;
  }
  if (h.httpGet)
    return `HTTP lifecycle hook (${h.httpGet.path ?? ''}) for Container ${JSON.stringify(c.name)} in Pod ${JSON.stringify(podDescription(pod))} failed - error: ${out.output}`;
  return `Lifecycle hook for Container ${JSON.stringify(c.name)} in Pod ${JSON.stringify(podDescription(pod))} failed - error: ${out.output}`;
}

/** Runs the hook; `timeoutSeconds` 0 = no limit (postStart), the grace period for preStop. Undefined = success. */
export async function runHook(
  pod: Pod,
  h: LifecycleHandler,
  t: HandlerTarget,
  timeoutSeconds: number,
): Promise<string | undefined> {
  const out = await runHandler(h, t, timeoutSeconds);
  return out.result === 'success' ? undefined : hookFailureMessage(pod, t.container, h, out);
}
