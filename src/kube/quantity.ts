/**
 * Kubernetes `resource.Quantity`: parsing, comparison and canonical printing. Values are held
 * exactly as a count of nano-units (kube keeps at most nano precision and rounds finer values up,
 * away from zero), so `1Gi`, `1073741824` and `1.073741824G` compare equal.
 */

export type QuantityFormat = 'BinarySI' | 'DecimalSI' | 'DecimalExponent';

export interface Quantity {
  /** value × 10⁹ */
  readonly nanos: bigint;
  readonly format: QuantityFormat;
}

export const QUANTITY_REGEX_TEXT = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';
const FORMAT_WRONG = `quantities must match the regular expression '${QUANTITY_REGEX_TEXT}'`;
const SUFFIX_WRONG = "unable to parse quantity's suffix";

/** A string that is not a Kubernetes quantity; the message is kube's. */
export class QuantityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'QuantityError';
  }
}

const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const DECIMAL_BY_EXP = new Map(Object.entries(DECIMAL).map(([s, e]) => [e, s]));
const BINARY_BY_EXP = new Map(Object.entries(BINARY).map(([s, e]) => [e / 10, s]));
/** Larger exponents would only build giant bigints; kube users never write them. */
const MAX_EXPONENT = 1000;
const NANO = 1_000_000_000n;

function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

/** Divides rounding away from zero (kube's RoundUp at nano scale). */
function divAwayFromZero(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b === 0n ? q : a < 0n ? q - 1n : q + 1n;
}

/** Parses a quantity (a JSON string or number); throws QuantityError with kube's message. */
export function parseQuantity(input: string | number): Quantity {
  const s = typeof input === 'number' ? String(input) : input;
  const m = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(.*)$/.exec(s);
  if (!s || !m || (m[2] === '' && (m[3] ?? '') === '')) throw new QuantityError(FORMAT_WRONG);
  const [, sign, whole, frac = '', suffix = ''] = m;
  let format: QuantityFormat;
  let base2 = 0;
  let exp10 = 0;
  if (suffix in BINARY) {
    format = 'BinarySI';
    base2 = BINARY[suffix]!;
  } else if (suffix in DECIMAL) {
    format = 'DecimalSI';
    exp10 = DECIMAL[suffix]!;
  } else if (/^[eE][-+]?[0-9]+$/.test(suffix)) {
    format = 'DecimalExponent';
    exp10 = Number(suffix.slice(1));
  } else if (/^[eEinumkKMGTP]*[-+]?[0-9]*$/.test(suffix)) {
    throw new QuantityError(SUFFIX_WRONG);
  } else {
    throw new QuantityError(FORMAT_WRONG);
  }
  if (Math.abs(exp10) > MAX_EXPONENT) throw new QuantityError(FORMAT_WRONG);
  let n = BigInt(`${whole}${frac}` || '0') * (1n << BigInt(base2));
  const scale = 9 + exp10 - frac.length;
  n = scale >= 0 ? n * pow10(scale) : divAwayFromZero(n, pow10(-scale));
  return { nanos: sign === '-' ? -n : n, format };
}

/** parseQuantity, or undefined when the input is not a quantity. */
export function tryParseQuantity(input: unknown): Quantity | undefined {
  if (typeof input !== 'string' && typeof input !== 'number') return undefined;
  try {
    return parseQuantity(input);
  } catch {
    return undefined;
  }
}

/** -1, 0 or 1 as `Quantity.Cmp`. */
export function compareQuantities(a: Quantity, b: Quantity): -1 | 0 | 1 {
  return a.nanos < b.nanos ? -1 : a.nanos > b.nanos ? 1 : 0;
}

/** A parsed quantity, its text or JSON number, or absent (Go's zero Quantity). */
export type QuantityInput = Quantity | string | number | undefined;

function parsed(q: QuantityInput): Quantity | undefined {
  return q === undefined ? undefined : typeof q === 'object' ? q : parseQuantity(q);
}

/** Nano-units of a quantity; an absent one is zero. Throws QuantityError. */
export function quantityNanos(q: QuantityInput): bigint {
  return parsed(q)?.nanos ?? 0n;
}

/** `Quantity.Value()`: the integer value, rounded up (so `500m` → 1); absent is zero. Throws QuantityError. */
export function quantityValue(q: QuantityInput): bigint {
  const n = quantityNanos(q);
  return n >= 0n ? divAwayFromZero(n, NANO) : n / NANO;
}

/** Bytes of a quantity (its Value()); the usual reading of a storage size. */
export function quantityBytes(q: Quantity | string): bigint {
  return quantityValue(q);
}

/** Bytes of a storage quantity, or undefined when absent or unparsable (admission validated it). */
export function bytesOf(q: string | undefined): bigint | undefined {
  if (q === undefined) return undefined;
  try {
    return quantityBytes(q);
  } catch {
    return undefined;
  }
}

/** A byte count as Kubernetes prints `resource.NewQuantity(n, BinarySI)`, e.g. 1073741824 → `1Gi`. */
export function bytesQuantity(n: bigint): string {
  return formatQuantity({ nanos: n * NANO, format: 'BinarySI' });
}

function stripFactor(n: bigint, f: bigint, max = Infinity): [bigint, number] {
  let times = 0;
  while (n !== 0n && n % f === 0n && times < max) {
    n /= f;
    times++;
  }
  return [n, times];
}

/** The canonical text of a quantity, as `Quantity.String()` prints it (`1.5Gi` → `1536Mi`). */
export function formatQuantity(q: Quantity): string {
  const { nanos } = q;
  if (nanos === 0n) return '0';
  let format = q.format;
  if (format === 'BinarySI') {
    const small = nanos > -1024n * NANO && nanos < 1024n * NANO;
    if (small || nanos % NANO !== 0n) format = 'DecimalSI';
  }
  const neg = nanos < 0n;
  const abs = neg ? -nanos : nanos;
  const sign = neg ? '-' : '';
  if (format === 'BinarySI') {
    const [mantissa, times] = stripFactor(abs / NANO, 1024n, 6);
    return `${sign}${mantissa}${BINARY_BY_EXP.get(times) ?? ''}`;
  }
  let [mantissa, times] = stripFactor(abs, 10n);
  let exponent = times - 9;
  const r = exponent % 3;
  if (r === 1 || r === -2) {
    mantissa *= 10n;
    exponent -= 1;
  } else if (r === 2 || r === -1) {
    mantissa *= 100n;
    exponent -= 2;
  }
  if (exponent === 0) return `${sign}${mantissa}`;
  const si = format === 'DecimalSI' ? DECIMAL_BY_EXP.get(exponent) : undefined;
  return `${sign}${mantissa}${si ?? `e${exponent}`}`;
}

/** Canonical text of a quantity string, or the input unchanged when it does not parse. */
export function canonicalQuantity(input: unknown): unknown {
  const q = tryParseQuantity(input);
  return q ? formatQuantity(q) : input;
}
