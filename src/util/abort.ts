import { setMaxListeners } from 'node:events';

/**
 * An AbortController that aborts with `parent` (at once if the parent already has) and can also
 * be aborted on its own, which detaches it from the parent. Components hand its signal to many informers, workers and operations,
 * so the listener limit is lifted.
 */
export function childAbortController(parent: AbortSignal): AbortController {
  const child = new AbortController();
  setMaxListeners(0, child.signal);
  if (parent.aborted) {
    child.abort(parent.reason);
    return child;
  }
  const onParent = (): void => child.abort(parent.reason);
  parent.addEventListener('abort', onParent, { once: true });
  // Aborted on its own: a long-lived parent keeps no listener for it.
  child.signal.addEventListener('abort', () => parent.removeEventListener('abort', onParent), { once: true });
  return child;
}

/** Resolves once `signal` aborts (at once if it has). */
export function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
