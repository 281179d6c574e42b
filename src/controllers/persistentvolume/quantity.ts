/**
 * Private Kubernetes quantity parser (src/api/resources/common.ts had none when this was written).
 * A quantity becomes a bigint count of nano-units, rounded up, which is exact for every suffix
 * Kubernetes accepts down to `n`; comparisons then match resource.Quantity.Cmp.
 */
const BINARY: Record<string, bigint> = {
  Ki: 1n << 10n,
  Mi: 1n << 20n,
  Gi: 1n << 30n,
  Ti: 1n << 40n,
  Pi: 1n << 50n,
  Ei: 1n << 60n,
};
const DECIMAL_EXP: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const NANO_EXP = 9;
const QUANTITY_RE = /^([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$/;

export class QuantityParseError extends Error {}

/** Parse a quantity string into nano-units (ceil). Throws QuantityParseError on malformed input. */
export function parseQuantityNanos(s: string): bigint {
  const m = QUANTITY_RE.exec(s.trim());
  if (!m) throw new QuantityParseError(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': ${s}`);
  const negative = m[1] === '-';
  const [intPart, fracPart = ''] = (m[2] ?? '0').split('.');
  const suffix = m[3] ?? '';
  // value = digits * 10^(exp10 - fracLen) * mult
  const digits = BigInt((intPart || '0') + fracPart);
  let exp10 = -fracPart.length + NANO_EXP;
  let mult = 1n;
  if (suffix in BINARY) mult = BINARY[suffix] ?? 1n;
  else if (suffix.startsWith('e') || suffix.startsWith('E')) exp10 += Number(suffix.slice(1));
  else exp10 += DECIMAL_EXP[suffix] ?? 0;
  let num = digits * mult;
  if (exp10 >= 0) num *= 10n ** BigInt(exp10);
  else {
    const div = 10n ** BigInt(-exp10);
    num = negative ? num / div : (num + div - 1n) / div;
  }
  return negative ? -num : num;
}

/** Nanos of a quantity-or-undefined; absent counts as zero (Go's zero Quantity). */
export function quantityNanos(q: string | number | undefined): bigint {
  if (q === undefined) return 0n;
  return parseQuantityNanos(String(q));
}

/** resource.Quantity.Value(): the integer value rounded up. */
export function quantityValue(q: string | number | undefined): bigint {
  const n = quantityNanos(q);
  const unit = 10n ** BigInt(NANO_EXP);
  return n >= 0n ? (n + unit - 1n) / unit : n / unit;
}
