import { crashPoint } from './crash.js';
import type { HostpathDriver } from './driver.js';
import type { Pending } from './state.js';

// The crash rule of every effect whose target only a record can name (a volume's or snapshot's
// data, named by a random id): the intent is durable before the effect, settled after it, and
// the reply waits for the settlement. Start-up (recover.ts) rolls intents to create back (the
// call never replied) and finishes intents to delete.

/**
 * Applies an in-memory change and makes it durable; when the write fails the change is undone, so
 * memory never holds what the disk does not (a later reply would otherwise report it).
 */
export async function commit(d: HostpathDriver, apply: () => void, undo: () => void): Promise<void> {
  apply();
  try {
    await d.store.save();
  } catch (e) {
    undo();
    throw e;
  }
}

interface Intended {
  readonly id: string;
  pending?: Pending;
}

/**
 * Creates `rec` in `records` under an intent: recorded with `pending: 'create'`, then `make` writes
 * its data, then the record is settled. When `make` fails, `unmake` removes what it wrote and the
 * intent is dropped (or, failing that, left for start-up to roll back).
 */
export async function createUnderIntent<R extends Intended>(
  d: HostpathDriver,
  o: {
    rpc: 'CreateVolume' | 'CreateSnapshot';
    records: Record<string, R>;
    rec: R;
    make: () => Promise<void>;
    unmake: () => Promise<void>;
  },
): Promise<void> {
  const { rec, records } = o;
  rec.pending = 'create';
  await commit(
    d,
    () => (records[rec.id] = rec),
    () => delete records[rec.id],
  );
  crashPoint(`${o.rpc}:intent`);
  try {
    await o.make();
  } catch (e) {
    await o
      .unmake()
      .then(() =>
        commit(
          d,
          () => delete records[rec.id],
          () => (records[rec.id] = rec),
        ),
      )
      .catch((x: unknown) => d.log.warn(`rolling back a failed ${o.rpc} failed`, { id: rec.id, error: String(x) }));
    throw e;
  }
  crashPoint(`${o.rpc}:data`);
  await commit(
    d,
    () => delete rec.pending,
    () => (rec.pending = 'create'),
  );
  crashPoint(`${o.rpc}:settled`);
}

/**
 * Deletes `rec` from `records` under an intent: `pending: 'delete'` is recorded (unless a crashed
 * call already did), `remove` deletes its data, then the record goes. Also how start-up settles
 * any intent: an unfinished creation is removed the same way.
 */
export async function deleteUnderIntent<R extends Intended>(
  d: HostpathDriver,
  o: { rpc: 'DeleteVolume' | 'DeleteSnapshot'; records: Record<string, R>; rec: R; remove: () => Promise<void> },
): Promise<void> {
  const { rec, records } = o;
  if (!rec.pending) {
    await commit(
      d,
      () => (rec.pending = 'delete'),
      () => delete rec.pending,
    );
    crashPoint(`${o.rpc}:intent`);
  }
  await o.remove();
  crashPoint(`${o.rpc}:data-removed`);
  await commit(
    d,
    () => delete records[rec.id],
    () => (records[rec.id] = rec),
  );
  crashPoint(`${o.rpc}:settled`);
}
