import { InvalidArgumentError, Option } from 'commander';

/**
 * Parses a duration flag as Go's time.ParseDuration does for the upstream tools whose flags we
 * mirror (node-driver-registrar, external-* sidecars): `1s`, `500ms`, `2m`, `1m30s`, `1h`.
 * Returns milliseconds.
 */
export function parseDuration(s: string): number {
  const unit: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  let total = 0;
  let consumed = 0;
  for (const m of s.matchAll(re)) {
    if (m.index !== consumed) break;
    total += Number(m[1]) * (unit[m[2] ?? ''] ?? 0);
    consumed += m[0].length;
  }
  if (s === '' || consumed !== s.length)
    throw new InvalidArgumentError(`not a duration: ${JSON.stringify(s)} (e.g. 1s, 500ms)`);
  return total;
}

/** A duration flag that must be greater than zero. */
export function parsePositiveDuration(s: string): number {
  const ms = parseDuration(s);
  if (ms <= 0) throw new InvalidArgumentError('duration must be positive');
  return Math.round(ms);
}

/** Milliseconds as Go's time.Duration prints them (`500ms`, `15s`, `1m0s`, `1h0m0s`), as kube's --help shows defaults. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1_000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1_000;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

/** A `<duration>` flag whose default --help shows as a Go duration; the value is milliseconds. */
export function durationOption(
  flags: string,
  description: string,
  defaultMs: number,
  parse: (s: string) => number = parsePositiveDuration,
): Option {
  return new Option(flags, description).argParser(parse).default(defaultMs, formatDuration(defaultMs));
}

/** An integer flag that must be at least 1. */
export function positiveInt(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

/** An integer flag that must be at least 0; `flag` names it in the error. */
export function nonNegativeInt(flag: string): (v: string) => number {
  return (v) => {
    const n = Number(v);
    if (!/^\d+$/.test(v) || !Number.isSafeInteger(n))
      throw new InvalidArgumentError(`${flag} must be a non-negative integer`);
    return n;
  };
}

/**
 * A decimal number flag within [min, max] (`minExclusive`: above min); `flag` names it in the error.
 * For kube's float32 flags, whose nonsensical values we refuse rather than misbehave on.
 */
export function boundedNumber(
  flag: string,
  o: { min: number; minExclusive?: boolean; max?: number },
): (v: string) => number {
  return (v) => {
    const n = Number(v);
    const range = `${o.minExclusive ? 'greater than' : 'at least'} ${o.min}${o.max === undefined ? '' : ` and at most ${o.max}`}`;
    if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(v.trim()) || !Number.isFinite(n))
      throw new InvalidArgumentError(`${flag} must be a number ${range}`);
    if (n < o.min || (o.minExclusive && n === o.min) || (o.max !== undefined && n > o.max))
      throw new InvalidArgumentError(`${flag} must be ${range}`);
    return n;
  };
}
