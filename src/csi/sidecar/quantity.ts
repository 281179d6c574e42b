import { formatQuantity, parseQuantity, quantityBytes } from '../../api/resources/quantity.js';

/** Bytes of a storage quantity, or undefined when absent or unparsable. */
export function bytesOf(q: string | undefined): bigint | undefined {
  if (q === undefined) return undefined;
  try {
    return quantityBytes(parseQuantity(q));
  } catch {
    return undefined; // admission validated quantities; an unparsable one is treated as absent
  }
}

/** A byte count as Kubernetes prints `resource.NewQuantity(n, BinarySI)`, e.g. 1073741824 → `1Gi`. */
export function bytesQuantity(n: bigint): string {
  return formatQuantity({ nanos: n * 1_000_000_000n, format: 'BinarySI' });
}
