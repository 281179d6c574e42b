import type { DesiredPlugin, RegisteredPlugin } from '../cache/types.js';

export type PluginOperation =
  | { readonly kind: 'unregister'; readonly plugin: RegisteredPlugin }
  | { readonly kind: 'register'; readonly plugin: DesiredPlugin };

/**
 * What to do to make actual match desired. Unregistrations come first: a socket re-created with
 * a new timestamp must drop its old registration before it may register again, and a plugin name
 * freed by a removed socket must be free before another socket claims it.
 */
export function reconcile(desired: readonly DesiredPlugin[], actual: readonly RegisteredPlugin[]): PluginOperation[] {
  const want = new Map(desired.map((d) => [d.socketPath, d.timestamp]));
  const have = new Map(actual.map((a) => [a.socketPath, a.timestamp]));
  const unregister: PluginOperation[] = actual
    .filter((a) => want.get(a.socketPath) !== a.timestamp)
    .map((plugin) => ({ kind: 'unregister', plugin }));
  const register: PluginOperation[] = desired
    .filter((d) => have.get(d.socketPath) !== d.timestamp)
    .map((plugin) => ({ kind: 'register', plugin }));
  return [...unregister, ...register];
}
