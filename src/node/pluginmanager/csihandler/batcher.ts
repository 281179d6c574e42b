import { AlreadyExistsError, ConflictError, NotFoundError } from '../../../util/errors.js';
import { CONFLICT_RETRIES } from './retry.js';

/**
 * An edit of one object: returns the new object, or undefined to leave it as it is. It may throw
 * to refuse (only its own caller sees the error). It can run more than once (after a conflict),
 * always on a freshly read object.
 */
export type Mutation<T> = (current: T | undefined) => T | undefined;

/** How to read and write the object a batcher edits. */
export interface ObjectAccess<T> {
  /** The object, or undefined when it does not exist. */
  get(): Promise<T | undefined>;
  /** Creates it when `current` was undefined, else updates it (optimistic concurrency). */
  write(next: T, current: T | undefined): Promise<T>;
}

/**
 * Serializes this process's edits of one object and applies all edits waiting at the same time
 * in one read and one write: 20 drivers registering at once cost one Node update, not 20 that
 * conflict with each other. The object as last written is reused instead of reading it again
 * (this process is its main writer); a conflict with another writer means a fresh read and a retry.
 */
export interface ObjectBatcher<T> {
  /** Resolves with the object as written (or as read, when no edit changed it). */
  apply(m: Mutation<T>): Promise<T | undefined>;
}

interface Pending<T> {
  readonly m: Mutation<T>;
  readonly resolve: (v: T | undefined) => void;
  readonly reject: (e: unknown) => void;
}

export function newObjectBatcher<T>(access: ObjectAccess<T>): ObjectBatcher<T> {
  let queue: Array<Pending<T>> = [];
  let running = false;
  // What we last wrote: still current unless someone else wrote since (then the write conflicts).
  let lastWritten: T | undefined;

  const runBatch = async (batch: Array<Pending<T>>): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      const failed = new Map<Pending<T>, unknown>();
      try {
        const cached = lastWritten;
        lastWritten = undefined;
        const current: T | undefined = cached !== undefined ? structuredClone(cached) : await access.get();
        let next: T | undefined = current;
        let changed = false;
        for (const p of batch) {
          try {
            const out = p.m(next);
            if (out !== undefined) {
              next = out;
              changed = true;
            }
          } catch (e) {
            failed.set(p, e);
          }
        }
        // Decisions made on the cached copy are validated by the conditional write; without a
        // write nothing proves the copy was current, so decide again on a fresh read.
        if (cached !== undefined && !changed) continue;
        let written: T | undefined = current;
        if (changed && next !== undefined) {
          written = await access.write(next, current);
          lastWritten = written;
        }
        for (const p of batch) {
          if (failed.has(p)) p.reject(failed.get(p));
          else p.resolve(written);
        }
        return;
      } catch (e) {
        // Lost a race (another writer updated or created it, or deleted it under us): read again.
        const raced = e instanceof ConflictError || e instanceof AlreadyExistsError || e instanceof NotFoundError;
        const retry = raced && attempt < CONFLICT_RETRIES;
        if (!retry) {
          for (const p of batch) p.reject(failed.get(p) ?? e);
          return;
        }
      }
    }
  };

  const drain = async (): Promise<void> => {
    running = true;
    try {
      while (queue.length > 0) {
        const batch = queue;
        queue = [];
        await runBatch(batch);
      }
    } finally {
      running = false;
    }
  };

  return {
    apply: (m) =>
      new Promise<T | undefined>((resolve, reject) => {
        queue.push({ m, resolve, reject });
        if (!running) void drain();
      }),
  };
}
