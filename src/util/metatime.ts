/** metav1.Time as Kubernetes serializes it: RFC 3339 in UTC, second precision (`2026-11-22T15:04:05Z`). */
export function metaTime(ms: number = Date.now()): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** metav1.MicroTime: RFC 3339 with microseconds (`2026-11-22T15:04:05.123000Z`). */
export function microTime(ms: number = Date.now()): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
