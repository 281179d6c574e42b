/**
 * A revisioned key-value log in the shape of etcd v3. Every successful write gets the next global
 * revision (a positive integer, never reused). Keys are strings such as
 * `/registry/persistentvolumes/pv1` or `/registry/persistentvolumeclaims/ns/claim1`.
 *
 * Implementations: `sqlite.ts` (embedded default), `etcd.ts` (scale-out). All implementations run
 * `contract.test-kit.ts`.
 */
export interface KeyValue {
  readonly key: string;
  readonly value: string;
  /** Revision of the write that created this key (its current incarnation). */
  readonly createRevision: number;
  /** Revision of the last write to this key. */
  readonly modRevision: number;
}

export type WatchEventType = 'PUT' | 'DELETE';

export interface WatchEvent {
  readonly type: WatchEventType;
  /** For PUT the new value; for DELETE the key with the deleted value and the delete's revision as modRevision. */
  readonly kv: KeyValue;
  /** The value before this event (undefined for a create). */
  readonly prev?: KeyValue;
  /** Revision of this event. */
  readonly revision: number;
}

export interface ListOptions {
  /** Maximum number of items; 0 or undefined = all. */
  readonly limit?: number;
  /** Exclusive start key for paging (as returned in ListResult.continueKey). */
  readonly startAfter?: string;
  /** Read at this revision (must not be compacted, must not be in the future). Default: current. */
  readonly revision?: number;
}

export interface ListResult {
  readonly items: readonly KeyValue[];
  /** Revision the list was read at. */
  readonly revision: number;
  /** Set when more items remain: the last key returned. */
  readonly continueKey?: string;
  /** Items remaining after this page (when limit cut it). */
  readonly remaining?: number;
}

export interface Watcher {
  /** Stop delivering events; idempotent. */
  close(): void;
}

export interface WatchOptions {
  /** Deliver every event with revision > afterRevision. Default: only future events. */
  readonly afterRevision?: number;
  readonly onEvent: (ev: WatchEvent) => void;
  /** Every event up to `revision` under the prefix has been delivered (etcd progress notifications). */
  readonly onProgress?: (revision: number) => void;
  /** Called once if the watch ends by error (e.g. ExpiredError when afterRevision is compacted). */
  readonly onError?: (err: Error) => void;
}

/**
 * Methods are async so that a networked backend (etcd) fits the same interface; the SQLite
 * implementation completes synchronously inside the returned promise. Writes are linearizable:
 * the returned KeyValue's modRevision is the write's revision.
 */
export interface Store {
  /**
   * True when every watch event is delivered before the write's promise resolves (SQLite): a
   * cache fed by a watch is then never behind `currentRevision()`. False for etcd.
   */
  readonly synchronousWatch: boolean;
  /** Current revision (0 for an empty store). */
  currentRevision(): number;
  /** Oldest revision still watchable/listable; events with revision > compactedRevision are retained. */
  compactedRevision(): number;
  get(key: string): Promise<KeyValue | undefined>;
  /** Keys with this prefix, in key order. Throws ExpiredError for a compacted revision. */
  list(prefix: string, opts?: ListOptions): Promise<ListResult>;
  /** Count of keys with this prefix. */
  count(prefix: string): Promise<number>;
  /** Fails with AlreadyExistsError if the key exists. Returns the new KeyValue. */
  create(key: string, value: string): Promise<KeyValue>;
  /**
   * Compare-and-swap: succeeds only when the key exists and (if given) its modRevision equals
   * `expectedModRevision`. NotFoundError when absent, ConflictError on a revision mismatch.
   */
  update(key: string, value: string, expectedModRevision?: number): Promise<KeyValue>;
  /** NotFoundError when absent, ConflictError on a revision mismatch. Returns the deleted value. */
  delete(key: string, expectedModRevision?: number): Promise<KeyValue>;
  /**
   * Ordered events for keys under `prefix`. SQLite delivers them synchronously after the write
   * commits; etcd as its watch stream brings them (after the write's promise may have resolved).
   * A compacted afterRevision → onError(ExpiredError).
   */
  watch(prefix: string, opts: WatchOptions): Watcher;
  /**
   * Why the store cannot serve now (etcd unreachable or without quorum), or undefined when it can.
   * Optional: an embedded store is always available while open.
   */
  unavailable?(): Promise<string | undefined>;
  /**
   * The current revision, read now (a quorum read), after asking every watch for a progress
   * notification up to it: a watch cache that reaches it is consistent with the store. Optional:
   * a synchronous store's caches are never behind.
   */
  requestProgress?(): Promise<number>;
  /** Drop history at or below `revision` (keeps current values). */
  compact(revision: number): Promise<void>;
  close(): Promise<void>;
}
