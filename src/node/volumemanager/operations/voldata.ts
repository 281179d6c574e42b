import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Pod-level vol_data.json (csi_mounter.go's keys): what reconstruction reads after a restart. */
export interface PodVolData {
  readonly specVolID: string;
  readonly volumeHandle: string;
  readonly driverName: string;
  readonly nodeName: string;
  readonly attachmentID: string;
  readonly volumeLifecycleMode: 'Persistent' | 'Ephemeral';
  /** Stowage's addition (ignored by the kubelet): the pod's name for the volume, to find its subPaths after a restart. */
  readonly outerSpecName?: string;
}

/** Device-level vol_data.json beside globalmount. */
export interface DeviceVolData {
  readonly driverName: string;
  readonly volumeHandle: string;
}

/** Written atomically (temp + rename): a crash leaves the old file or the new one, never half. */
export async function writeVolData(file: string, data: PodVolData | DeviceVolData): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp`;
  await writeFile(tmp, JSON.stringify(data), { mode: 0o600 });
  await rename(tmp, file);
}

const str = (o: Record<string, unknown>, k: string): string => (typeof o[k] === 'string' ? (o[k] as string) : '');

/** Parsed vol_data.json, or undefined when missing or unusable (no driver or handle). */
export async function readVolData(file: string): Promise<PodVolData | undefined> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return undefined;
  }
  if (typeof raw !== 'object' || raw === null) return undefined;
  const o = raw as Record<string, unknown>;
  const d: PodVolData = {
    specVolID: str(o, 'specVolID'),
    volumeHandle: str(o, 'volumeHandle'),
    driverName: str(o, 'driverName'),
    nodeName: str(o, 'nodeName'),
    attachmentID: str(o, 'attachmentID'),
    volumeLifecycleMode: str(o, 'volumeLifecycleMode') === 'Ephemeral' ? 'Ephemeral' : 'Persistent',
    ...(str(o, 'outerSpecName') ? { outerSpecName: str(o, 'outerSpecName') } : {}),
  };
  return d.driverName && d.volumeHandle ? d : undefined;
}
