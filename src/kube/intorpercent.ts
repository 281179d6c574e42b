/** Kubernetes' IntOrString used as a count or a percentage of a total (maxSurge, maxUnavailable, minAvailable). */
export type IntOrPercent = number | string;

/**
 * intstr.GetScaledValueFromIntOrPercent: an integer as it is, `N%` of `total` rounded up or down.
 * A string that is not a percentage counts as a number (validation refuses it before it gets here).
 */
export function scaledIntOrPercent(v: IntOrPercent | undefined | null, total: number, roundUp: boolean): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number') return v;
  const m = /^(\d+)%$/.exec(v);
  if (!m) return Number(v) || 0;
  const x = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(x) : Math.floor(x);
}
