/**
 * Vocabulary shared by the volume manager's caches, populator, reconciler and operations.
 */

/** Unique volume name: `kubernetes.io/csi/<driver>^<volumeHandle>`, or per-pod for emptyDir/hostPath. */
export type VolumeName = string & { readonly __brand: 'VolumeName' };
/** A pod's UID: pod directories and pod volume mounts are keyed by it. */
export type PodUid = string & { readonly __brand: 'PodUid' };

export const volumeName = (s: string): VolumeName => s as VolumeName;
export const podUid = (s: string): PodUid => s as PodUid;

export const PLUGINS = [
  'kubernetes.io/csi',
  'kubernetes.io/empty-dir',
  'kubernetes.io/host-path',
  'kubernetes.io/local-volume',
  'kubernetes.io/configmap',
  'kubernetes.io/secret',
  'kubernetes.io/downward-api',
  'kubernetes.io/projected',
] as const;
export type PluginName = (typeof PLUGINS)[number];

export const VOLUME_MODES = ['Filesystem', 'Block'] as const;
export type VolumeMode = (typeof VOLUME_MODES)[number];

/** The `kubernetes.io~csi` form used in pod directories. */
export function escapePluginName(p: PluginName): string {
  return p.replace('/', '~');
}

/** Unique name of a CSI volume (kubelet: plugin name + "/" + driver + "^" + handle). */
export function csiVolumeName(driver: string, handle: string): VolumeName {
  return volumeName(`kubernetes.io/csi/${driver}^${handle}`);
}

/** Where a pod reference points: enough to name it in events and API calls. */
export interface PodRef {
  readonly uid: PodUid;
  readonly namespace: string;
  readonly name: string;
}

/** A container's volumeMount that asks for a subPath of the volume. */
export interface SubPathMount {
  readonly container: string;
  /** Index of the volumeMount in the container's list (kubelet's directory name). */
  readonly index: number;
  readonly subPath: string;
  readonly readOnly: boolean;
}

/** What the operations need to know about one volume, resolved from pod + claim + PV. */
export interface VolumeSpec {
  readonly plugin: PluginName;
  /** PV name for claims, the pod volume's name for inline volumes (kubelet's spec name). */
  readonly specName: string;
  readonly mode: VolumeMode;
  readonly readOnly: boolean;
  readonly csi?: CsiSource;
  /** hostPath (pod volume or PV) and `local` PV: the path on the host. */
  readonly hostPath?: string;
  /** hostPath.type: the check SetUp makes ("" → none). */
  readonly hostPathType?: HostPathType;
  readonly emptyDir?: EmptyDirSpec;
  /** configMap, secret, downwardAPI and projected: the files to write, resolved from the API objects. */
  readonly payload?: Payload;
  /** PV capacity in bytes, and the claim whose status capacity it is compared with (expansion). */
  readonly capacityBytes?: number;
  /** The PV's capacity as written (a Quantity string), copied to the claim's status after expansion. */
  readonly capacity?: string;
  readonly claim?: { readonly namespace: string; readonly name: string };
  /** true for a `csi` inline volume in the pod (Ephemeral lifecycle: no staging). */
  readonly ephemeral?: boolean;
}

export interface CsiSource {
  readonly driver: string;
  readonly volumeHandle: string;
  readonly fsType: string;
  readonly mountOptions: readonly string[];
  readonly volumeAttributes: Readonly<Record<string, string>>;
  readonly accessMode: CsiAccessMode;
}

export type CsiAccessMode =
  | 'SINGLE_NODE_WRITER'
  | 'SINGLE_NODE_READER_ONLY'
  | 'MULTI_NODE_READER_ONLY'
  | 'MULTI_NODE_MULTI_WRITER'
  | 'SINGLE_NODE_SINGLE_WRITER'
  | 'SINGLE_NODE_MULTI_WRITER';

export const HOST_PATH_TYPES = [
  '',
  'DirectoryOrCreate',
  'Directory',
  'FileOrCreate',
  'File',
  'Socket',
  'CharDevice',
  'BlockDevice',
] as const;
export type HostPathType = (typeof HOST_PATH_TYPES)[number];

export interface EmptyDirSpec {
  readonly medium: 'Memory' | '';
  /** tmpfs size (medium Memory): sizeLimit, else the pod's memory limit, else unset (node memory). */
  readonly sizeBytes?: number;
}

/** One file of a configMap/secret/downwardAPI/projected volume. */
export interface PayloadFile {
  /** Relative path inside the volume (validated: no `..`, not absolute). */
  readonly path: string;
  readonly data: Buffer;
  readonly mode: number;
}

export interface Payload {
  readonly files: readonly PayloadFile[];
  /** Digest of paths, modes and contents: a change means the volume is written again. */
  readonly digest: string;
  /** secret, downwardAPI and projected live on a tmpfs (never on disk), as the kubelet puts them. */
  readonly tmpfs: boolean;
  /** tmpfs size: the pod's memory limit when it has one. */
  readonly tmpfsBytes?: number;
}
