/**
 * The kubelet's prober manager: one worker per (pod, container, probe kind), each ticking every
 * periodSeconds on the latest runtime view the pod sync hands it. Workers cache results; the pod
 * sync reads them (ready, started) and kills what `unhealthy` names. A result change wakes the sync.
 */
import type { Container, Pod, Probe } from 'kubernetes-types/core/v1.js';
import type { EventRecorder } from '../../../client/events.js';
import type { Clock } from '../../../util/backoff.js';
import type { Logger } from '../../../util/log.js';
import type { CriClient } from '../client.js';
import { latestOf, type RuntimePod, type Unhealthy } from '../pod-actions.js';
import { runHandler } from './handlers.js';
import {
  PROBE_KINDS,
  applyOutcome,
  containerProbeStatus,
  decideTick,
  initialResult,
  probeTiming,
  probeTitle,
  type CachedResult,
  type ContainerView,
  type ProbeKind,
  type WorkerState,
} from './probe-worker.js';

export interface ProberOptions {
  readonly cri: CriClient;
  readonly podIP: string;
  readonly recorder: EventRecorder;
  readonly clock: Clock;
  readonly signal: AbortSignal;
  readonly log: Logger;
  /** Called when a cached result changes (the pod's status or actions may change). */
  readonly onChange: (uid: string) => void;
}

export interface Prober {
  /** Keeps one worker per probe of the pod's containers, on this runtime view; idempotent. */
  update(pod: Pod, rt: RuntimePod, sandboxId: string | undefined): void;
  /** Stops the pod's workers and forgets its results. */
  removePod(uid: string): void;
  /** `started` and `ready` of a container attempt, from its probes' cached results. */
  status(pod: Pod, container: Container, containerId: string, running: boolean): { started: boolean; ready: boolean };
  /** Containers whose liveness or startup probe failed, by container id. */
  unhealthy(uid: string): Unhealthy;
  stop(): Promise<void>;
}

function probeOf(c: Container, kind: ProbeKind): Probe | undefined {
  return kind === 'startup' ? c.startupProbe : kind === 'liveness' ? c.livenessProbe : c.readinessProbe;
}

interface Worker {
  readonly key: string;
  readonly kind: ProbeKind;
  readonly container: string;
  /** The probe as last seen; a changed probe replaces the worker. */
  readonly probeJson: string;
  state?: WorkerState;
  readonly abort: AbortController;
  done: Promise<void>;
  /** Ends the current wait between ticks (a no-op while probing). */
  poke: () => void;
}

interface PodView {
  pod: Pod;
  rt: RuntimePod;
  sandboxId: string | undefined;
}

export function newProber(o: ProberOptions): Prober {
  const workers = new Map<string, Worker>();
  const views = new Map<string, PodView>();

  const resultOf = (uid: string, container: string, kind: ProbeKind, containerId: string): CachedResult => {
    const s = workers.get(`${uid}/${container}/${kind}`)?.state;
    return s && s.containerId === containerId ? s.result : initialResult(kind);
  };

  const viewOf = (uid: string, name: string): { spec: Container; view: ContainerView } | undefined => {
    const v = views.get(uid);
    const spec = v?.pod.spec?.containers?.find((c) => c.name === name);
    if (!v || !spec) return undefined;
    const latest = latestOf(
      v.rt.containers.filter((c) => c.sandboxId === v.sandboxId),
      name,
    );
    if (!latest) return undefined;
    const running = latest.state === 'running';
    const started = spec.startupProbe === undefined || resultOf(uid, name, 'startup', latest.id) === 'success';
    return { spec, view: { id: latest.id, running, startedAtMs: latest.startedAtMs, started } };
  };

  const tick = async (uid: string, w: Worker): Promise<void> => {
    const v = views.get(uid);
    const found = viewOf(uid, w.container);
    const probe = found ? probeOf(found.spec, w.kind) : undefined;
    if (!v || !found || !probe) return;
    const timing = probeTiming(probe);
    const t = decideTick(w.kind, timing, w.state, found.view, o.clock.now());
    if (t.kind === 'wait') return;
    const before = w.state?.containerId === t.state.containerId ? w.state.result : undefined;
    if (t.kind === 'set') {
      w.state = t.state;
      if (before !== t.state.result) o.onChange(uid);
      return;
    }
    const out = await runHandler(
      probe,
      { cri: o.cri, containerId: found.view.id, container: found.spec, podIP: o.podIP, signal: w.abort.signal },
      timing.timeoutSeconds,
    );
    if (w.abort.signal.aborted) return;
    // The container may have been replaced while the probe ran: its outcome is about the old one.
    if (viewOf(uid, w.container)?.view.id !== found.view.id) return;
    if (out.result === 'failure')
      o.recorder.event(v.pod, 'Warning', 'Unhealthy', `${probeTitle(w.kind)} probe failed: ${out.output}`);
    w.state = applyOutcome(w.kind, timing, t.state, out.result);
    if (before !== w.state.result) o.onChange(uid);
  };

  const startWorker = (uid: string, c: Container, kind: ProbeKind, probe: Probe): Worker => {
    const abort = new AbortController();
    const signal = AbortSignal.any([o.signal, abort.signal]);
    const w: Worker = {
      key: `${uid}/${c.name}/${kind}`,
      kind,
      container: c.name,
      probeJson: JSON.stringify(probe),
      abort,
      done: Promise.resolve(),
      poke: () => undefined,
    };
    const periodMs = probeTiming(probe).periodSeconds * 1000;
    w.done = (async () => {
      while (!signal.aborted) {
        try {
          await tick(uid, w);
        } catch (e) {
          o.log.warn('probe worker tick failed', { worker: w.key, error: String(e) });
        }
        const nap = new AbortController();
        w.poke = () => nap.abort();
        await o.clock.sleep(periodMs, AbortSignal.any([signal, nap.signal])).catch(() => undefined);
        w.poke = () => undefined;
      }
    })();
    return w;
  };

  return {
    update(pod, rt, sandboxId) {
      const uid = pod.metadata?.uid ?? '';
      views.set(uid, { pod, rt, sandboxId });
      const wanted = new Set<string>();
      for (const c of pod.spec?.containers ?? []) {
        for (const kind of PROBE_KINDS) {
          const probe = probeOf(c, kind);
          if (!probe) continue;
          const key = `${uid}/${c.name}/${kind}`;
          wanted.add(key);
          const w = workers.get(key);
          if (w && w.probeJson === JSON.stringify(probe)) continue;
          w?.abort.abort();
          workers.set(key, startWorker(uid, c, kind, probe));
        }
      }
      for (const [key, w] of workers) {
        if (key.startsWith(`${uid}/`) && !wanted.has(key)) {
          w.abort.abort();
          workers.delete(key);
        }
      }
    },
    removePod(uid) {
      views.delete(uid);
      for (const [key, w] of workers) {
        if (!key.startsWith(`${uid}/`)) continue;
        w.abort.abort();
        workers.delete(key);
      }
    },
    status(pod, c, containerId, running) {
      const uid = pod.metadata?.uid ?? '';
      // The kubelet runs a readiness probe at once when a running container's readiness is still
      // undetermined, instead of waiting out its period.
      if (running && c.readinessProbe && resultOf(uid, c.name, 'readiness', containerId) !== 'success')
        workers.get(`${uid}/${c.name}/readiness`)?.poke();
      return containerProbeStatus({
        running,
        hasStartup: c.startupProbe !== undefined,
        hasReadiness: c.readinessProbe !== undefined,
        startup: resultOf(uid, c.name, 'startup', containerId),
        readiness: resultOf(uid, c.name, 'readiness', containerId),
      });
    },
    unhealthy(uid) {
      const out = new Map<string, 'liveness' | 'startup'>();
      for (const w of workers.values()) {
        if (!w.key.startsWith(`${uid}/`) || w.kind === 'readiness' || w.state?.result !== 'failure') continue;
        out.set(w.state.containerId, w.kind);
      }
      return out;
    },
    async stop() {
      for (const w of workers.values()) w.abort.abort();
      await Promise.all([...workers.values()].map((w) => w.done));
      workers.clear();
    },
  };
}
