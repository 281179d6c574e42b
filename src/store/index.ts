export type {
  KeyValue,
  ListOptions,
  ListResult,
  Store,
  WatchEvent,
  WatchEventType,
  WatchOptions,
  Watcher,
} from './store.js';
export { openSqliteStore } from './sqlite.js';
export type { SqliteStore, SqliteStoreOptions } from './sqlite.js';
export { openEtcdStore, DEFAULT_ETCD_PREFIX } from './etcd.js';
export type { EtcdStore, EtcdStoreOptions } from './etcd.js';
