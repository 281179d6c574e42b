/**
 * The kubelet's pod lifecycle on a CRI runtime: each pod on this node is synced through the
 * executor (one sync per pod at a time, backoff after a failure). A sync reads the pod's sandbox
 * and containers from the runtime, asks computePodActions what to do, does it, and writes the pod
 * status from what the runtime then reports. Volumes are mounted before any container starts;
 * the volume manager keeps a pod's volumes while `activePods` says its runtime still runs it.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import type { EventRecorder } from '../../client/events.js';
import { informerFor, runInformers } from '../../client/informer.js';
import type { RestClient } from '../../client/rest.js';
import { realClock, type Clock } from '../../util/backoff.js';
import { NotFoundError, toStowageError } from '../../util/errors.js';
import { newOperationExecutor, type OperationExecutor } from '../../util/executor.js';
import { newLogger, type Logger } from '../../util/log.js';
import { newLoop } from '../../util/loop.js';
import type { CriClient } from './client.js';
import {
  ContainerConfigError, LABEL_CONTAINER_NAME, LABEL_POD_UID, containerConfig, containerEnv, podLogDir, pullPolicyOf, sandboxConfig,
} from './container-config.js';
import { computePodActions, crashLoopDelayMs, latestOf, type ContainerInfo, type RuntimePod } from './pod-actions.js';
import { runtimePodStatus, type Waiting } from './pod-status.js';

/** Which pods' runtime may still be running: until the first listing, every pod's may. */
export class ActivePods {
  private listed = false;
  private readonly active = new Set<string>();
  isActive(uid: string): boolean {
    return !this.listed || this.active.has(uid);
  }
  set(uid: string, active: boolean): void {
    if (active) this.active.add(uid);
    else this.active.delete(uid);
  }
  markListed(): void {
    this.listed = true;
  }
  uids(): string[] {
    return [...this.active];
  }
}

/** What the lifecycle needs from the volume manager. */
export interface PodVolumes {
  /** Volume name → host path of the pod's mounted volumes. */
  mounted(uid: string): ReadonlyMap<string, string>;
  /** `<root>/pods/<uid>/volume-subpaths/<volume>/<container>/<index>`. */
  subPathDir(uid: string, volume: string, container: string, index: number): string;
}

export interface PodRuntimeManagerOptions {
  readonly client: RestClient;
  readonly cri: CriClient;
  readonly nodeName: string;
  readonly rootDir: string;
  /** The node's address: pods run on the host network. */
  readonly hostIP: string;
  readonly volumes: PodVolumes;
  readonly activePods: ActivePods;
  readonly recorder: EventRecorder;
  readonly signal: AbortSignal;
  readonly clock?: Clock;
  readonly log?: Logger;
  /** Runtime relist period (kubelet PLEG: 1 s). */
  readonly periodMs?: number;
}

export interface PodRuntimeManager {
  stop(): Promise<void>;
}

const IMAGE_BACKOFF_INITIAL_MS = 10_000;
const IMAGE_BACKOFF_MAX_MS = 300_000;

const podKey = (uid: string): string => `pod-sync/${uid}`;

function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${s % 60}s` : `${s}s`;
}

export async function startPodRuntimeManager(o: PodRuntimeManagerOptions): Promise<PodRuntimeManager> {
  const log = o.log ?? newLogger('runtime');
  const clock = o.clock ?? realClock;
  const stopCtl = new AbortController();
  const signal = AbortSignal.any([o.signal, stopCtl.signal]);
  const exec: OperationExecutor = newOperationExecutor({ clock, log: log.child('executor') });
  const pods = informerFor(o.client, 'Pod', { fieldSelector: `spec.nodeName=${o.nodeName}` });
  /** Exited containers do not change: their status is read once. */
  const exitedCache = new Map<string, ContainerInfo>();
  const waiting = new Map<string, Map<string, Waiting>>();
  const imageBackoff = new Map<string, { failures: number; untilMs: number }>();
  const lastStatus = new Map<string, string>();

  const readRuntimePod = async (uid: string): Promise<RuntimePod> => {
    const sandboxes = await o.cri.listPodSandbox({ labelSelector: { [LABEL_POD_UID]: uid } }, { signal });
    const list = await o.cri.listContainers({ labelSelector: { [LABEL_POD_UID]: uid } }, { signal });
    const containers: ContainerInfo[] = [];
    for (const c of list) {
      const cached = exitedCache.get(c.id);
      if (cached) {
        containers.push(cached);
        continue;
      }
      let st;
      try {
        st = (await o.cri.containerStatus(c.id, { signal })).status;
      } catch (e) {
        if (toStowageError(e) instanceof NotFoundError) continue; // removed meanwhile
        throw e;
      }
      if (!st) continue;
      const info: ContainerInfo = {
        id: c.id,
        sandboxId: c.podSandboxId,
        name: c.labels[LABEL_CONTAINER_NAME] ?? c.metadata?.name ?? '',
        attempt: c.metadata?.attempt ?? 0,
        state: st.state === 'CONTAINER_RUNNING' ? 'running' : st.state === 'CONTAINER_EXITED' ? 'exited' : st.state === 'CONTAINER_CREATED' ? 'created' : 'unknown',
        exitCode: st.exitCode,
        reason: st.reason === 'Completed' || st.reason === 'Error' ? '' : st.reason,
        message: st.message,
        createdAtMs: Math.floor(st.createdAt / 1e6),
        startedAtMs: Math.floor(st.startedAt / 1e6),
        finishedAtMs: Math.floor(st.finishedAt / 1e6),
        image: st.image?.image ?? '',
        imageRef: st.imageRef,
      };
      if (info.state === 'exited') exitedCache.set(c.id, info);
      containers.push(info);
    }
    return {
      sandboxes: sandboxes.map((s) => ({ id: s.id, ready: s.state === 'SANDBOX_READY', attempt: s.metadata?.attempt ?? 0, createdAtMs: Math.floor(s.createdAt / 1e6) })),
      containers,
    };
  };

  const isActive = (rt: RuntimePod): boolean => rt.sandboxes.some((s) => s.ready) || rt.containers.some((c) => c.state === 'running' || c.state === 'created');

  /** SIGTERM with the grace period, then the sandbox; removal only when asked. */
  const killPod = async (pod: Pod | undefined, rt: RuntimePod, remove: boolean): Promise<void> => {
    const grace = pod?.metadata?.deletionGracePeriodSeconds ?? pod?.spec?.terminationGracePeriodSeconds ?? 30;
    await Promise.all(
      rt.containers.filter((c) => c.state === 'running' || c.state === 'created').map(async (c) => {
        await o.cri.stopContainer(c.id, grace, { signal });
        if (pod) o.recorder.event(pod, 'Normal', 'Killing', `Stopping container ${c.name}`);
      }),
    );
    for (const s of rt.sandboxes) await o.cri.stopPodSandbox(s.id, { signal });
    if (!remove) return;
    for (const c of rt.containers) {
      await o.cri.removeContainer(c.id, { signal });
      exitedCache.delete(c.id);
    }
    for (const s of rt.sandboxes) await o.cri.removePodSandbox(s.id, { signal });
  };

  /** The image for `name` is present (pulled per its policy), or its waiting reason is recorded. */
  const ensureImage = async (pod: Pod, name: string, image: string, policy: 'Always' | 'IfNotPresent' | 'Never', w: Map<string, Waiting>): Promise<string | undefined> => {
    const uid = pod.metadata?.uid ?? '';
    const key = `${uid}/${name}`;
    if (policy !== 'Always') {
      const present = await o.cri.imageStatus(image, { signal });
      if (present) return present.id;
      if (policy === 'Never') {
        const message = `Container image "${image}" is not present with pull policy of Never`;
        w.set(name, { reason: 'ErrImageNeverPull', message });
        o.recorder.event(pod, 'Warning', 'ErrImageNeverPull', message);
        return undefined;
      }
    }
    const b = imageBackoff.get(key);
    if (b && clock.now() < b.untilMs) {
      const message = `Back-off pulling image "${image}"`;
      w.set(name, { reason: 'ImagePullBackOff', message });
      o.recorder.event(pod, 'Normal', 'BackOff', message);
      return undefined;
    }
    o.recorder.event(pod, 'Normal', 'Pulling', `Pulling image "${image}"`);
    try {
      const r = await o.cri.pullImage({ image: { image } }, { signal });
      imageBackoff.delete(key);
      o.recorder.event(pod, 'Normal', 'Pulled', `Successfully pulled image "${image}"`);
      return r.imageRef;
    } catch (e) {
      if (signal.aborted) throw e;
      const failures = (b?.failures ?? 0) + 1;
      imageBackoff.set(key, { failures, untilMs: clock.now() + Math.min(IMAGE_BACKOFF_INITIAL_MS * 2 ** (failures - 1), IMAGE_BACKOFF_MAX_MS) });
      const message = `Failed to pull image "${image}": ${toStowageError(e).message}`;
      w.set(name, { reason: 'ErrImagePull', message });
      o.recorder.event(pod, 'Warning', 'Failed', message);
      o.recorder.event(pod, 'Warning', 'Failed', 'Error: ErrImagePull');
      return undefined;
    }
  };

  // The volume manager's populator reports a pod still waiting for its volumes (the kubelet's
  // FailedMount summary after 2m3s); here the pod only waits.
  const volumesReady = (pod: Pod): boolean => {
    const mounted = o.volumes.mounted(pod.metadata?.uid ?? '');
    return (pod.spec?.volumes ?? []).every((v) => mounted.has(v.name));
  };

  const startContainer = async (pod: Pod, sandboxId: string, name: string, init: boolean, attempt: number, sandboxAttempt: number, w: Map<string, Waiting>): Promise<void> => {
    const spec = (init ? pod.spec?.initContainers : pod.spec?.containers)?.find((c) => c.name === name);
    if (!spec) return;
    const uid = pod.metadata?.uid ?? '';
    const imageRef = await ensureImage(pod, name, spec.image ?? '', pullPolicyOf(spec), w);
    if (imageRef === undefined) return;
    let env: Map<string, string>;
    const mounts = new Map<number, string>();
    try {
      const data = await referencedData(pod, spec);
      env = containerEnv(pod, spec, {
        hostIP: o.hostIP,
        configMapKey: (ns, name, key) => data.configMaps.get(`${ns}/${name}`)?.[key],
        secretKey: (ns, name, key) => {
          const v = data.secrets.get(`${ns}/${name}`)?.[key];
          return v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8');
        },
      });
      const mounted = o.volumes.mounted(uid);
      for (const [i, m] of (spec.volumeMounts ?? []).entries()) {
        const host = mounted.get(m.name);
        if (host === undefined) throw new ContainerConfigError(`volume ${m.name} is not mounted`);
        mounts.set(i, m.subPath ? o.volumes.subPathDir(uid, m.name, name, i) : host);
      }
    } catch (e) {
      if (!(e instanceof ContainerConfigError)) throw e;
      w.set(name, { reason: 'CreateContainerConfigError', message: e.message });
      o.recorder.event(pod, 'Warning', 'Failed', `Error: ${e.message}`);
      return;
    }
    await mkdir(join(podLogDir(o.rootDir, pod), name), { recursive: true, mode: 0o755 });
    const { containerId } = await o.cri.createContainer(
      { podSandboxId: sandboxId, sandboxConfig: sandboxConfig(pod, sandboxAttempt, o.rootDir), config: containerConfig({ pod, container: spec, attempt, imageRef, env, mounts }) },
      { signal },
    );
    o.recorder.event(pod, 'Normal', 'Created', `Created container ${name}`);
    await o.cri.startContainer(containerId, { signal });
    o.recorder.event(pod, 'Normal', 'Started', `Started container ${name}`);
  };

  /** The configMaps' and secrets' data the container's env names (absent ones stay absent). */
  const referencedData = async (pod: Pod, spec: Container): Promise<{ configMaps: Map<string, Record<string, string>>; secrets: Map<string, Record<string, string>> }> => {
    const ns = pod.metadata?.namespace ?? 'default';
    const configMaps = new Map<string, Record<string, string>>();
    const secrets = new Map<string, Record<string, string>>();
    for (const e of spec.env ?? []) {
      const cm = e.valueFrom?.configMapKeyRef?.name;
      const sec = e.valueFrom?.secretKeyRef?.name;
      try {
        if (cm !== undefined && !configMaps.has(`${ns}/${cm}`)) configMaps.set(`${ns}/${cm}`, (await o.client.resource('ConfigMap').get(cm, { namespace: ns, signal })).data ?? {});
        if (sec !== undefined && !secrets.has(`${ns}/${sec}`)) secrets.set(`${ns}/${sec}`, (await o.client.resource('Secret').get(sec, { namespace: ns, signal })).data ?? {});
      } catch (err) {
        if (!(toStowageError(err) instanceof NotFoundError)) throw err;
      }
    }
    return { configMaps, secrets };
  };

  const writeStatus = async (pod: Pod, rt: RuntimePod, w: ReadonlyMap<string, Waiting>): Promise<void> => {
    const uid = pod.metadata?.uid ?? '';
    const sandboxId = [...rt.sandboxes].filter((s) => s.ready).sort((a, b) => b.createdAtMs - a.createdAtMs)[0]?.id;
    const status = runtimePodStatus({ pod, rt, waiting: w, sandboxId, hostIP: o.hostIP, nowMs: clock.now() });
    const { conditions: _c, ...comparable } = status;
    const fingerprint = JSON.stringify(comparable);
    if (lastStatus.get(uid) === fingerprint) return;
    try {
      await o.client.resource('Pod').patchStatus(pod.metadata?.name ?? '', 'merge', { status }, { namespace: pod.metadata?.namespace, signal });
      lastStatus.set(uid, fingerprint);
    } catch (e) {
      if (!(toStowageError(e) instanceof NotFoundError)) throw e;
    }
  };

  const syncPod = async (pod: Pod): Promise<void> => {
    const uid = pod.metadata?.uid ?? '';
    const rt = await readRuntimePod(uid);
    const a = computePodActions(pod, rt, clock.now());
    const w = new Map<string, Waiting>();
    if (a.killPod) await killPod(pod, rt, a.removePod);
    if (!pod.metadata?.deletionTimestamp && (a.createSandbox || a.start.length > 0) && !volumesReady(pod)) {
      o.activePods.set(uid, isActive(await readRuntimePod(uid)));
      return;
    }
    let sandboxId = a.sandboxId;
    if (a.createSandbox) {
      await mkdir(podLogDir(o.rootDir, pod), { recursive: true, mode: 0o755 });
      o.activePods.set(uid, true); // before the sandbox exists: the volumes must stay from here on
      sandboxId = (await o.cri.runPodSandbox({ config: sandboxConfig(pod, a.sandboxAttempt, o.rootDir) }, { signal })).podSandboxId;
    }
    for (const [name, leftMs] of a.backingOff) {
      const c = latestOf(rt.containers, name);
      const message = `back-off ${duration(crashLoopDelayMs(c?.attempt ?? 0))} restarting failed container=${name} pod=${pod.metadata?.name}_${pod.metadata?.namespace}(${uid})`;
      w.set(name, { reason: 'CrashLoopBackOff', message });
      if (leftMs > 0) o.recorder.event(pod, 'Warning', 'BackOff', 'Back-off restarting failed container');
    }
    for (const c of a.kill) await o.cri.stopContainer(c.id, pod.spec?.terminationGracePeriodSeconds ?? 30, { signal });
    if (sandboxId !== undefined) for (const s of a.start) await startContainer(pod, sandboxId, s.name, s.init, s.attempt, a.sandboxAttempt, w);
    const after = await readRuntimePod(uid);
    o.activePods.set(uid, isActive(after));
    waiting.set(uid, w);
    if (!pod.metadata?.deletionTimestamp && (after.sandboxes.length > 0 || w.size > 0)) await writeStatus(pod, after, w);
  };

  /** A pod the API no longer has: its containers and sandbox go. */
  const cleanupOrphan = async (uid: string): Promise<void> => {
    const rt = await readRuntimePod(uid);
    await killPod(undefined, rt, true);
    o.activePods.set(uid, false);
    lastStatus.delete(uid);
    waiting.delete(uid);
  };

  const loop = newLoop({
    name: 'pod-runtime',
    periodMs: o.periodMs ?? 1_000,
    clock,
    log,
    body: async () => {
      if (!pods.hasSynced()) return;
      const listed = await o.cri.listPodSandbox(undefined, { signal });
      const runtimeUids = new Set(listed.map((s) => s.labels[LABEL_POD_UID] ?? '').filter((u) => u !== ''));
      for (const s of listed) if (s.state === 'SANDBOX_READY') o.activePods.set(s.labels[LABEL_POD_UID] ?? '', true);
      o.activePods.markListed();
      const live = new Set<string>();
      for (const pod of pods.lister.list()) {
        const uid = pod.metadata?.uid ?? '';
        live.add(uid);
        exec.run(podKey(uid), 'sync_pod', () => syncPod(pod));
      }
      for (const uid of new Set([...runtimeUids, ...o.activePods.uids()])) if (!live.has(uid)) exec.run(podKey(uid), 'cleanup_pod', () => cleanupOrphan(uid));
    },
  });
  pods.addEventHandler({ onAdd: () => loop.trigger(), onUpdate: () => loop.trigger(), onDelete: () => loop.trigger() });
  exec.onChange((c) => {
    if (c.kind === 'retryDue') loop.trigger();
  });
  const informerRuns = runInformers(signal, [pods], log);
  const loopRun = loop.run(signal);
  return {
    stop: async () => {
      stopCtl.abort();
      await loopRun;
      await exec.close();
      await Promise.all(informerRuns);
    },
  };
}
