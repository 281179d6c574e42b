/**
 * The controller's own cache of the last known volumes and claims, fed by informer events AND by the
 * controller's successful writes (Kubernetes' storeObjectUpdate). Without it, a bind's later events
 * would be judged against stale informer copies and the controller would try to "fix" objects it had
 * already written. Older resourceVersions are ignored; equal ones pass (periodic resync).
 */
import { newVolumeIndex, type VolumeIndex } from './index.js';
import { volumeClass } from '../../kube/class.js';
import { volumeCouldSatisfy } from './match.js';
import { claimKey, type PersistentVolume, type PersistentVolumeClaim } from './types.js';

export class ResourceVersionError extends Error {}

export interface PvControllerCache {
  readonly volumes: VolumeIndex;
  /** Store if not older than the cached copy; returns whether it was stored. */
  storeVolume(v: PersistentVolume): boolean;
  deleteVolume(name: string): void;
  getClaim(key: string): PersistentVolumeClaim | undefined;
  storeClaim(c: PersistentVolumeClaim): boolean;
  deleteClaim(key: string): void;
  listClaims(): PersistentVolumeClaim[];
  /**
   * Claims that found no volume, by storage class. Kubernetes retries them only at the next resync
   * (15 s); Stowage wakes one of them shortly after a volume it could take becomes Available
   * (ControllerOptions.waitingClaimWakeDelayMs).
   */
  markWaiting(key: string, cls: string): void;
  /**
   * Remove and return the longest-waiting claim that `volume` could satisfy. One per volume: waking
   * every waiting claim of the class for each new volume made N claims re-sync N times.
   */
  takeWaitingFor(volume: PersistentVolume): string | undefined;
}

export function newPvControllerCache(): PvControllerCache {
  return new Cache();
}

function rv(o: { metadata?: { resourceVersion?: string; name?: string } }): bigint {
  const s = o.metadata?.resourceVersion ?? '';
  if (!/^[0-9]+$/.test(s))
    throw new ResourceVersionError(`error parsing ResourceVersion "${s}" of "${o.metadata?.name ?? ''}"`);
  return BigInt(s);
}

/** storeObjectUpdate: new objects are added; only strictly older versions are refused. */
function isNotOlder(
  old: { metadata?: { resourceVersion?: string } } | undefined,
  obj: { metadata?: { resourceVersion?: string } },
): boolean {
  if (!old) return true;
  return rv(old) <= rv(obj);
}

class Cache implements PvControllerCache {
  readonly volumes: VolumeIndex = newVolumeIndex();
  private readonly claims = new Map<string, PersistentVolumeClaim>();
  private readonly waiting = new Map<string, Set<string>>();

  markWaiting(key: string, cls: string): void {
    let s = this.waiting.get(cls);
    if (!s) this.waiting.set(cls, (s = new Set()));
    s.add(key);
  }

  takeWaitingFor(volume: PersistentVolume): string | undefined {
    const s = this.waiting.get(volumeClass(volume));
    if (!s) return undefined;
    for (const key of s) {
      const claim = this.claims.get(key);
      if (claim && !claim.spec?.volumeName && !volumeCouldSatisfy(claim, volume)) continue;
      // A claim gone from the cache, or bound meanwhile, is dropped; one that could take the volume is woken.
      s.delete(key);
      if (claim && !claim.spec?.volumeName) return key;
    }
    return undefined;
  }

  storeVolume(v: PersistentVolume): boolean {
    const name = v.metadata?.name ?? '';
    if (!isNotOlder(this.volumes.get(name), v)) return false;
    this.volumes.upsert(v);
    return true;
  }

  deleteVolume(name: string): void {
    this.volumes.remove(name);
  }

  getClaim(key: string): PersistentVolumeClaim | undefined {
    return this.claims.get(key);
  }

  storeClaim(c: PersistentVolumeClaim): boolean {
    const key = claimKey(c);
    if (!isNotOlder(this.claims.get(key), c)) return false;
    this.claims.set(key, c);
    return true;
  }

  deleteClaim(key: string): void {
    this.claims.delete(key);
  }

  listClaims(): PersistentVolumeClaim[] {
    return [...this.claims.values()];
  }
}
