import type { Volume } from 'kubernetes-types/core/v1.js';
import { applyFsGroup } from '../../operations/fsgroup.js';
import { podPluginDir, podVolumeDir } from '../../operations/paths.js';
import { volumeName, type PluginName } from '../../types.js';
import { memoryVolumeBytes, setUpSubPaths } from '../common.js';
import { setUpVolumeDir, tearDownVolumeDir } from '../empty-dir.js';
import { listDir } from '../fsutil.js';
import type { ResolveEnv, VolumePlugin } from '../plugin.js';
import { writePayloadAtomically } from './atomic-writer.js';
import {
  configMapFiles,
  DEFAULT_MODE,
  downwardFiles,
  PayloadError,
  payloadDigest,
  secretFiles,
  type Files,
} from './payload.js';

type Kind = 'configMap' | 'secret' | 'downwardAPI' | 'projected';

/** The files a volume of this kind holds now; throws PayloadError with the kubelet's message. */
function filesOf(kind: Kind, v: Volume, env: ResolveEnv): Files {
  const out: Files = new Map();
  const ns = env.ref.namespace;
  const l = env.lookups;
  switch (kind) {
    case 'configMap':
      configMapFiles(out, ns, v.configMap!, v.configMap!.defaultMode ?? DEFAULT_MODE, l);
      break;
    case 'secret':
      secretFiles(out, ns, v.secret!, v.secret!.defaultMode ?? DEFAULT_MODE, l);
      break;
    case 'downwardAPI':
      downwardFiles(out, env.pod, v.downwardAPI!.items, v.downwardAPI!.defaultMode ?? DEFAULT_MODE);
      break;
    case 'projected': {
      const mode = v.projected!.defaultMode ?? DEFAULT_MODE;
      for (const s of v.projected!.sources ?? []) {
        if (s.configMap) configMapFiles(out, ns, s.configMap, mode, l);
        else if (s.secret) secretFiles(out, ns, s.secret, mode, l);
        else if (s.downwardAPI) downwardFiles(out, env.pod, s.downwardAPI.items, mode);
        else
          throw new PayloadError(
            `projected source ${Object.keys(s).join(',')} is not supported by Stowage (configMap, secret and downwardAPI are)`,
          );
      }
      break;
    }
  }
  return out;
}

/**
 * configMap, secret, downwardAPI and projected volumes: files written by the atomic writer into
 * the pod's volume directory — a plain directory for configMap, a tmpfs (sized like a memory
 * emptyDir) for the others, so secrets never touch the disk. The payload is resolved by the
 * populator; a changed payload (digest) makes the reconciler run SetUp again, which swaps `..data`.
 */
function projectionPlugin(name: PluginName, kind: Kind): VolumePlugin {
  const tmpfs = kind !== 'configMap';
  return {
    name,
    canSupport: (src) => src.kind === 'inline' && src.volume[kind] !== undefined,
    resolve(src, env) {
      let files: Files;
      try {
        files = filesOf(kind, src.volume, env);
      } catch (e) {
        if (e instanceof PayloadError)
          return { problem: `MountVolume.SetUp failed for volume "${src.volume.name}" : ${e.message}` };
        throw e;
      }
      const list = [...files.values()];
      return {
        volume: volumeName(`${name}/${env.ref.uid}-${src.volume.name}`),
        pluginIsAttachable: false,
        spec: {
          plugin: name,
          specName: src.volume.name,
          mode: 'Filesystem',
          readOnly: true,
          payload: {
            files: list,
            digest: payloadDigest(list),
            tmpfs,
            ...(tmpfs ? { tmpfsBytes: memoryVolumeBytes(env.pod) } : {}),
          },
        },
      };
    },
    requiresDeviceMount: () => false,
    async setUp(ctx, t) {
      const p = t.spec.payload;
      if (!p) throw new Error(`volume ${t.spec.specName} has no payload`);
      const dir = podVolumeDir(ctx.rootDir, t.pod.uid, name, t.spec.specName);
      await setUpVolumeDir(
        dir,
        p.tmpfs ? { ...(p.tmpfsBytes !== undefined ? { sizeBytes: p.tmpfsBytes } : {}) } : undefined,
      );
      await writePayloadAtomically(dir, p.files);
      // The kubelet's configMap/secret/projected/downwardAPI SetUp sets the volume's ownership to
      // the pod's fsGroup (read-only volumes: group read).
      if (t.fsGroup !== undefined)
        await applyFsGroup(dir, t.fsGroup, {
          readOnly: true,
          ...(t.fsGroupChangePolicy ? { policy: t.fsGroupChangePolicy } : {}),
        });
      await setUpSubPaths(ctx, t, dir, true); // containers see these volumes read-only
      ctx.asw.markVolumeMounted({
        volume: t.volume,
        pod: t.pod,
        outerSpecName: t.outerSpecName,
        spec: t.spec,
        state: 'Mounted',
        hostPath: dir,
      });
    },
    tearDown: (ctx, m) => tearDownVolumeDir(ctx, m),
    async reconstruct({ rootDir, asw }, uid) {
      let n = 0;
      for (const specName of await listDir(podPluginDir(rootDir, uid, name))) {
        const v = volumeName(`${name}/${uid}-${specName}`);
        const spec = { plugin: name, specName, mode: 'Filesystem', readOnly: true } as const;
        asw.markVolumeAttached(v, spec, '');
        // Uncertain: rewritten (or torn down) once the populator has run — an interrupted update is finished then.
        asw.markVolumeMounted({
          volume: v,
          pod: { uid, namespace: '', name: '' },
          outerSpecName: specName,
          spec,
          state: 'Uncertain',
          hostPath: podVolumeDir(rootDir, uid, name, specName),
        });
        n++;
      }
      return n;
    },
  };
}

export const configMapPlugin = projectionPlugin('kubernetes.io/configmap', 'configMap');
export const secretPlugin = projectionPlugin('kubernetes.io/secret', 'secret');
export const downwardApiPlugin = projectionPlugin('kubernetes.io/downward-api', 'downwardAPI');
export const projectedPlugin = projectionPlugin('kubernetes.io/projected', 'projected');
