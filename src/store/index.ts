export type { KeyValue, ListOptions, ListResult, Store, WatchEvent, WatchEventType, WatchOptions, Watcher } from './store.js';
export { openSqliteStore } from './sqlite.js';
export type { SqliteStore, SqliteStoreOptions } from './sqlite.js';
