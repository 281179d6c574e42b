/**
 * The kubelet's pod lifecycle on a CRI runtime: each pod on this node is synced through the
 * executor (one sync per pod at a time, backoff after a failure). A sync reads the pod's sandbox
 * and containers from the runtime, asks computePodActions what to do, does it, and writes the pod
 * status from what the runtime then reports. Volumes are mounted before any container starts;
 * the volume manager keeps a pod's volumes while `activePods` says its runtime still runs it.
 */
import { setMaxListeners } from 'node:events';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import type { EventRecorder } from '../../client/events.js';
import { secretData } from '../../csi/sidecar/secrets.js';
import { informerFor, runInformers } from '../../client/informer.js';
import type { RestClient } from '../../client/rest.js';
import { realClock, type Clock } from '../../util/backoff.js';
import { NotFoundError, toStowageError } from '../../util/errors.js';
import { newOperationExecutor, type OperationExecutor } from '../../util/executor.js';
import { newLogger, type Logger } from '../../util/log.js';
import { newLoop } from '../../util/loop.js';
import type { CriClient } from './client.js';
import { LABEL_CONTAINER_NAME, LABEL_POD_UID, containerConfig, podLogDir, sandboxConfig } from './container-config.js';
import { FAILED_CREATE_POD_SANDBOX, failedCreatePodSandboxMessage } from './sandbox-failure.js';
import {
  ContainerConfigError,
  containerEnv,
  expandSubPathExpr,
  referencedObjects,
  type NodeAllocatable,
} from './env.js';
import { podDescription, runHook } from './hooks.js';
import { computePodActions, crashLoopDelayOf, latestOf, type ContainerInfo, type RuntimePod } from './pod-actions.js';
import { changedPods, nextSyncDelayMs, relistFingerprints } from './pleg.js';
import { newProber } from './prober/prober.js';
import { newImageManager } from './images.js';
import { mountSubPath } from '../volumemanager/subpath/subpath.js';
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

// The kubelet never gives a container less than 2 s between SIGTERM and SIGKILL after a preStop hook.
const MIN_GRACE_AFTER_PRESTOP_S = 2;

export interface PodRuntimeManagerOptions {
  readonly client: RestClient;
  readonly cri: CriClient;
  readonly nodeName: string;
  readonly rootDir: string;
  /** The node's address: pods run on the host network. */
  readonly hostIP: string;
  /** The node's allocatable resources: what resourceFieldRef reads for limits a container does not set. */
  readonly allocatable?: NodeAllocatable;
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

// The kubelet's --sync-frequency: a pod nothing happens to is still synced once a minute.
const RESYNC_MS = 60_000;
// A pod waiting on something outside the runtime (its volumes, a configMap) is retried this often.
const RETRY_MS = 1_000;

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
  setMaxListeners(0, signal); // every probe worker and CRI call of every pod listens
  const exec: OperationExecutor = newOperationExecutor({ clock, log: log.child('executor') });
  const pods = informerFor(o.client, 'Pod', { fieldSelector: `spec.nodeName=${o.nodeName}` });
  /** Exited containers do not change: their status is read once. */
  const exitedCache = new Map<string, ContainerInfo>();
  const waiting = new Map<string, Map<string, Waiting>>();
  const images = newImageManager({ cri: o.cri, client: o.client, recorder: o.recorder, clock, signal });
  const lastStatus = new Map<string, string>();
  const prober = newProber({
    cri: o.cri,
    podIP: o.hostIP,
    recorder: o.recorder,
    clock,
    signal,
    log: log.child('prober'),
    onChange: (uid) => wake(uid),
  });

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
        state:
          st.state === 'CONTAINER_RUNNING'
            ? 'running'
            : st.state === 'CONTAINER_EXITED'
              ? 'exited'
              : st.state === 'CONTAINER_CREATED'
                ? 'created'
                : 'unknown',
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
      sandboxes: sandboxes.map((s) => ({
        id: s.id,
        ready: s.state === 'SANDBOX_READY',
        attempt: s.metadata?.attempt ?? 0,
        createdAtMs: Math.floor(s.createdAt / 1e6),
      })),
      containers,
    };
  };

  const isActive = (rt: RuntimePod): boolean =>
    rt.sandboxes.some((s) => s.ready) || rt.containers.some((c) => c.state === 'running' || c.state === 'created');

  /**
   * The kubelet's killContainer: the preStop hook (running containers, within the grace period),
   * then SIGTERM with what is left of the grace (at least 2 s), then SIGKILL by the runtime.
   */
  const killContainer = async (
    pod: Pod | undefined,
    c: ContainerInfo,
    graceSeconds: number,
    message: string,
  ): Promise<void> => {
    const spec = [...(pod?.spec?.containers ?? []), ...(pod?.spec?.initContainers ?? [])].find(
      (x) => x.name === c.name,
    );
    if (pod) o.recorder.event(pod, 'Normal', 'Killing', message);
    let grace = graceSeconds;
    const preStop = spec?.lifecycle?.preStop;
    if (pod && spec && preStop && c.state === 'running' && grace > 0) {
      const t0 = clock.now();
      const failed = await runHook(
        pod,
        preStop,
        { cri: o.cri, containerId: c.id, container: spec, podIP: o.hostIP, signal },
        grace,
      );
      if (failed !== undefined) o.recorder.event(pod, 'Warning', 'FailedPreStopHook', failed);
      grace = Math.max(MIN_GRACE_AFTER_PRESTOP_S, grace - Math.floor((clock.now() - t0) / 1000));
    }
    await o.cri.stopContainer(c.id, grace, { signal });
  };

  /** Every container killed (preStop, SIGTERM, grace, SIGKILL), then the sandbox; removal only when asked. */
  const killPod = async (pod: Pod | undefined, rt: RuntimePod, remove: boolean): Promise<void> => {
    const grace = pod?.metadata?.deletionGracePeriodSeconds ?? pod?.spec?.terminationGracePeriodSeconds ?? 30;
    await Promise.all(
      rt.containers
        .filter((c) => c.state === 'running' || c.state === 'created')
        .map((c) => killContainer(pod, c, grace, `Stopping container ${c.name}`)),
    );
    for (const s of rt.sandboxes) await o.cri.stopPodSandbox(s.id, { signal });
    if (!remove) return;
    for (const c of rt.containers) {
      await o.cri.removeContainer(c.id, { signal });
      exitedCache.delete(c.id);
    }
    for (const s of rt.sandboxes) await o.cri.removePodSandbox(s.id, { signal });
  };

  // The volume manager's populator reports a pod still waiting for its volumes (the kubelet's
  // FailedMount summary after 2m3s); here the pod only waits.
  const volumesReady = (pod: Pod): boolean => {
    const mounted = o.volumes.mounted(pod.metadata?.uid ?? '');
    return (pod.spec?.volumes ?? []).every((v) => mounted.has(v.name));
  };

  const startContainer = async (
    pod: Pod,
    sandboxId: string,
    name: string,
    init: boolean,
    attempt: number,
    sandboxAttempt: number,
    w: Map<string, Waiting>,
  ): Promise<void> => {
    const spec = (init ? pod.spec?.initContainers : pod.spec?.containers)?.find((c) => c.name === name);
    if (!spec) return;
    const uid = pod.metadata?.uid ?? '';
    const imageRef = await images.ensureImage(pod, spec, w);
    if (imageRef === undefined) return;
    let env: Map<string, string>;
    const mounts = new Map<number, string>();
    const devices = new Map<number, string>();
    try {
      const data = await referencedData(pod, spec);
      const r = containerEnv(pod, spec, {
        hostIPs: [o.hostIP],
        configMap: (ns, n) => data.configMaps.get(`${ns}/${n}`),
        secret: (ns, n) => data.secrets.get(`${ns}/${n}`),
        ...(o.allocatable ? { allocatable: o.allocatable } : {}),
      });
      env = r.env;
      for (const bad of r.invalidKeys)
        o.recorder.event(
          pod,
          'Warning',
          'InvalidEnvironmentVariableNames',
          `Keys [${bad.keys.join(', ')}] from the EnvFrom ${bad.source} were skipped since they are considered invalid environment variable names.`,
        );
      const mounted = o.volumes.mounted(uid);
      for (const [i, m] of (spec.volumeMounts ?? []).entries()) {
        const host = mounted.get(m.name);
        if (host === undefined) throw new ContainerConfigError(`volume ${m.name} is not mounted`);
        if (m.subPathExpr) {
          // subPathExpr needs the container's env, so it is expanded and bound here, at container
          // start, as the kubelet's makeMounts does; the volume manager's teardown unbinds it.
          const target = o.volumes.subPathDir(uid, m.name, name, i);
          await mountSubPath({
            volumeRoot: host,
            subPath: expandSubPathExpr(m.subPathExpr, env),
            target,
            readOnly: m.readOnly === true,
          }).catch((e: unknown) => {
            throw e instanceof ContainerConfigError
              ? e
              : new ContainerConfigError(
                  `failed to prepare subPath for volumeMount "${m.name}" of container "${name}": ${String(e)}`,
                );
          });
          mounts.set(i, target);
        } else mounts.set(i, m.subPath ? o.volumes.subPathDir(uid, m.name, name, i) : host);
      }
      for (const [i, d] of (spec.volumeDevices ?? []).entries()) {
        const host = mounted.get(d.name);
        if (host === undefined) throw new ContainerConfigError(`volume ${d.name} is not mapped`);
        devices.set(i, host);
      }
    } catch (e) {
      if (!(e instanceof ContainerConfigError)) throw e;
      w.set(name, { reason: 'CreateContainerConfigError', message: e.message });
      o.recorder.event(pod, 'Warning', 'Failed', `Error: ${e.message}`);
      return;
    }
    await mkdir(join(podLogDir(o.rootDir, pod), name), { recursive: true, mode: 0o755 });
    const { containerId } = await o.cri.createContainer(
      {
        podSandboxId: sandboxId,
        sandboxConfig: sandboxConfig(pod, sandboxAttempt, o.rootDir),
        config: containerConfig({ pod, container: spec, attempt, imageRef, env, mounts, devices }),
      },
      { signal },
    );
    o.recorder.event(pod, 'Normal', 'Created', `Created container ${name}`);
    await o.cri.startContainer(containerId, { signal });
    o.recorder.event(pod, 'Normal', 'Started', `Started container ${name}`);
    const postStart = spec.lifecycle?.postStart;
    if (postStart) {
      const failed = await runHook(
        pod,
        postStart,
        { cri: o.cri, containerId, container: spec, podIP: o.hostIP, signal },
        0,
      );
      if (failed !== undefined) {
        // The kubelet kills a container whose postStart hook failed; its restart policy decides what next.
        o.recorder.event(pod, 'Warning', 'FailedPostStartHook', failed);
        const info = (await readRuntimePod(uid)).containers.find((c) => c.id === containerId);
        if (info) await killContainer(pod, info, pod.spec?.terminationGracePeriodSeconds ?? 30, 'FailedPostStartHook');
      }
    }
  };

  /** The configMaps' and secrets' data (secrets decoded) the container's env and envFrom read; absent ones stay absent. */
  const referencedData = async (
    pod: Pod,
    spec: Container,
  ): Promise<{ configMaps: Map<string, Record<string, string>>; secrets: Map<string, Record<string, string>> }> => {
    const ns = pod.metadata?.namespace ?? 'default';
    const configMaps = new Map<string, Record<string, string>>();
    const secrets = new Map<string, Record<string, string>>();
    const refs = referencedObjects(spec);
    const absentIsUndefined = async <T>(get: () => Promise<T>): Promise<T | undefined> => {
      try {
        return await get();
      } catch (err) {
        if (toStowageError(err) instanceof NotFoundError) return undefined;
        throw err;
      }
    };
    for (const name of refs.configMaps) {
      const cm = await absentIsUndefined(() => o.client.resource('ConfigMap').get(name, { namespace: ns, signal }));
      if (cm) configMaps.set(`${ns}/${name}`, { ...(cm.data ?? {}), ...secretData(cm.binaryData) });
    }
    for (const name of refs.secrets) {
      const sec = await absentIsUndefined(() => o.client.resource('Secret').get(name, { namespace: ns, signal }));
      if (sec) secrets.set(`${ns}/${name}`, secretData(sec.data));
    }
    return { configMaps, secrets };
  };

  const writeStatus = async (pod: Pod, rt: RuntimePod, w: ReadonlyMap<string, Waiting>): Promise<void> => {
    const uid = pod.metadata?.uid ?? '';
    const sandboxId = [...rt.sandboxes].filter((s) => s.ready).sort((a, b) => b.createdAtMs - a.createdAtMs)[0]?.id;
    prober.update(pod, rt, sandboxId); // the workers see the containers this status reports
    const status = runtimePodStatus({
      pod,
      rt,
      waiting: w,
      sandboxId,
      hostIP: o.hostIP,
      nowMs: clock.now(),
      probes: (spec, id, running) => prober.status(pod, spec, id, running),
    });
    const { conditions: _c, ...comparable } = status;
    const fingerprint = JSON.stringify(comparable);
    if (lastStatus.get(uid) === fingerprint) return;
    try {
      await o.client
        .resource('Pod')
        .patchStatus(pod.metadata?.name ?? '', 'merge', { status }, { namespace: pod.metadata?.namespace, signal });
      lastStatus.set(uid, fingerprint);
    } catch (e) {
      if (!(toStowageError(e) instanceof NotFoundError)) throw e;
    }
  };

  /** One sync of the pod; resolves with the delay before it is due again without an event. */
  const syncPod = async (pod: Pod): Promise<number> => {
    const uid = pod.metadata?.uid ?? '';
    const rt = await readRuntimePod(uid);
    if (pod.metadata?.deletionTimestamp) prober.removePod(uid);
    else
      prober.update(pod, rt, rt.sandboxes.filter((s) => s.ready).sort((x, y) => y.createdAtMs - x.createdAtMs)[0]?.id);
    const a = computePodActions(pod, rt, clock.now(), prober.unhealthy(uid));
    const w = new Map<string, Waiting>();
    if (a.killPod) await killPod(pod, rt, a.removePod);
    if (!pod.metadata?.deletionTimestamp && (a.createSandbox || a.start.length > 0) && !volumesReady(pod)) {
      const now = await readRuntimePod(uid);
      o.activePods.set(uid, isActive(now));
      // The kubelet reports the pod as soon as it has it: containers waiting (ContainerCreating, or
      // PodInitializing behind init containers) while the volumes are being mounted.
      await writeStatus(pod, now, new Map());
      return nextSyncDelayMs({
        waitingForVolumes: true,
        waitingReasons: [],
        backoffLeftMs: [],
        resyncMs: RESYNC_MS,
        retryMs: RETRY_MS,
      });
    }
    let sandboxId = a.sandboxId;
    if (a.createSandbox) {
      await mkdir(podLogDir(o.rootDir, pod), { recursive: true, mode: 0o755 });
      o.activePods.set(uid, true); // before the sandbox exists: the volumes must stay from here on
      try {
        sandboxId = (await o.cri.runPodSandbox({ config: sandboxConfig(pod, a.sandboxAttempt, o.rootDir) }, { signal }))
          .podSandboxId;
      } catch (e) {
        if (signal.aborted) throw e;
        // As the kubelet: the Warning event, and the status shows the pod waiting for its sandbox.
        o.recorder.event(pod, 'Warning', FAILED_CREATE_POD_SANDBOX, failedCreatePodSandboxMessage(e));
        await writeStatus(pod, await readRuntimePod(uid), w);
        throw e;
      }
    }
    for (const [name, leftMs] of a.backingOff) {
      const c = latestOf(rt.containers, name);
      const message = `back-off ${duration(c ? crashLoopDelayOf(rt.containers, c) : 0)} restarting failed container=${name} pod=${podDescription(pod)}`;
      w.set(name, { reason: 'CrashLoopBackOff', message });
      if (leftMs > 0)
        o.recorder.event(
          pod,
          'Warning',
          'BackOff',
          `Back-off restarting failed container ${name} in pod ${podDescription(pod)}`,
        );
    }
    for (const k of a.kill)
      await killContainer(pod, k.container, k.graceSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30, k.message);
    if (sandboxId !== undefined)
      for (const s of a.start) await startContainer(pod, sandboxId, s.name, s.init, s.attempt, a.sandboxAttempt, w);
    const after = await readRuntimePod(uid);
    o.activePods.set(uid, isActive(after));
    waiting.set(uid, w);
    if (!pod.metadata?.deletionTimestamp && (after.sandboxes.length > 0 || w.size > 0))
      await writeStatus(pod, after, w);
    return nextSyncDelayMs({
      waitingForVolumes: false,
      waitingReasons: [...w.values()].map((x) => x.reason),
      backoffLeftMs: [...a.backingOff.values(), ...images.backoffLeftMs(uid)],
      resyncMs: RESYNC_MS,
      retryMs: RETRY_MS,
    });
  };

  /** A pod the API no longer has: its containers and sandbox go. */
  const cleanupOrphan = async (uid: string): Promise<void> => {
    prober.removePod(uid);
    images.forget(uid);
    const rt = await readRuntimePod(uid);
    await killPod(undefined, rt, true);
    o.activePods.set(uid, false);
    lastStatus.delete(uid);
    waiting.delete(uid);
  };

  /** Pods to sync at the next tick (an event, a changed runtime state, a probe result, a retry). */
  const dirty = new Set<string>();
  /** When each pod is due again without an event. */
  const dueAt = new Map<string, number>();
  let lastRelist = new Map<string, string>();
  const wake = (uid: string): void => {
    dirty.add(uid);
    loop.trigger();
  };

  // The kubelet's PLEG: one relist of the whole runtime per period; only the pods whose sandboxes
  // or containers changed (or that an event, a probe or their requeue time names) are synced.
  const loop = newLoop({
    name: 'pod-runtime',
    periodMs: o.periodMs ?? 1_000,
    clock,
    log,
    body: async () => {
      if (!pods.hasSynced()) return;
      const [sandboxes, containers] = await Promise.all([
        o.cri.listPodSandbox(undefined, { signal }),
        o.cri.listContainers(undefined, { signal }),
      ]);
      const relisted = relistFingerprints(sandboxes, containers);
      for (const uid of changedPods(lastRelist, relisted)) dirty.add(uid);
      lastRelist = relisted;
      for (const s of sandboxes) if (s.state === 'SANDBOX_READY') o.activePods.set(s.labels[LABEL_POD_UID] ?? '', true);
      o.activePods.markListed();
      const now = clock.now();
      const live = new Set<string>();
      for (const pod of pods.lister.list()) {
        const uid = pod.metadata?.uid ?? '';
        live.add(uid);
        if (!dirty.has(uid) && (dueAt.get(uid) ?? 0) > now) continue;
        // Refused (busy or backing off): it stays dirty; the settle or retry wakes it.
        const started = exec.run(podKey(uid), 'sync_pod', async () => {
          dueAt.set(uid, clock.now() + (await syncPod(pod)));
        });
        if (started === 'started') dirty.delete(uid);
      }
      for (const uid of new Set([...relisted.keys(), ...o.activePods.uids()]))
        if (!live.has(uid)) exec.run(podKey(uid), 'cleanup_pod', () => cleanupOrphan(uid));
      for (const uid of [...dueAt.keys()]) if (!live.has(uid)) dueAt.delete(uid);
      for (const uid of [...dirty]) if (!live.has(uid)) dirty.delete(uid); // orphans are cleaned up every tick anyway
    },
  });
  const uidOf = (p: Pod): string => p.metadata?.uid ?? '';
  pods.addEventHandler({
    onAdd: (p) => wake(uidOf(p)),
    onUpdate: (_old, p) => wake(uidOf(p)),
    onDelete: () => loop.trigger(),
  });
  exec.onChange((c) => {
    const uid =
      typeof c.key === 'string' && c.key.startsWith('pod-sync/') ? c.key.slice('pod-sync/'.length) : undefined;
    if (uid === undefined) return;
    if (c.kind === 'retryDue') wake(uid);
    else if (dirty.has(uid)) loop.trigger();
  });
  const informerRuns = runInformers(signal, [pods], log);
  const loopRun = loop.run(signal);
  return {
    stop: async () => {
      stopCtl.abort();
      await loopRun;
      await prober.stop();
      await exec.close();
      await Promise.all(informerRuns);
    },
  };
}
