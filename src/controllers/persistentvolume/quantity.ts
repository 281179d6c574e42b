/** Storage sizes for matching, through the shared Kubernetes quantity parser (exact nano-units). */
import { parseQuantity, quantityValue as value } from '../../api/resources/quantity.js';

/** Nano-units of a quantity; an absent one is zero (Go's zero Quantity). Throws QuantityError. */
export function quantityNanos(q: string | number | undefined): bigint {
  return q === undefined ? 0n : parseQuantity(q).nanos;
}

/** resource.Quantity.Value(): the integer value rounded up. */
export function quantityValue(q: string | number | undefined): bigint {
  return q === undefined ? 0n : value(parseQuantity(q));
}
