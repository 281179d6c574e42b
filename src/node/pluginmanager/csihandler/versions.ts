/** A parsed `major.minor.patch` version as plugins advertise them (`1.0.0`, `v1.2`, `1`). */
export interface Version {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  readonly text: string;
}

export function parseVersion(s: string): Version | undefined {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:[-+].*)?$/.exec(s.trim());
  if (!m) return undefined;
  return { major: Number(m[1]), minor: Number(m[2] ?? 0), patch: Number(m[3] ?? 0), text: s };
}

export function compareVersions(a: Version, b: Version): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch;
}

/**
 * The highest CSI 1.x version among those a plugin supports, or undefined when it supports none
 * (the kubelet only speaks CSI 1.x; 0.x drivers are refused). Unparseable entries are skipped.
 */
export function highestSupportedV1(versions: readonly string[]): Version | undefined {
  let best: Version | undefined;
  for (const s of versions) {
    const v = parseVersion(s);
    if (v?.major === 1 && (!best || compareVersions(v, best) > 0)) best = v;
  }
  return best;
}
