/**
 * Vocabulary of the plugin manager's caches.
 *
 * Life of one registration socket (keyed by its path):
 *
 *   socket created ──► desired (timestamp t) ──register──► GetInfo ──► handler validate
 *                                                              │ ok
 *                                   actual (timestamp t) ◄─────┘  (added BEFORE handler register,
 *                                        │                         so a delete during registration
 *                                        │                         becomes a deregistration)
 *                                        ▼
 *                              handler register ──fail──► removed from actual, retried with backoff
 *                                        │ ok
 *                              NotifyRegistrationStatus(true)
 *
 *   socket deleted or re-created (timestamp t' ≠ t) ──► unregister: removed from actual first,
 *   then handler deregister; a re-created socket then registers again.
 */

/** Absolute path of a registration socket (`<registry>/…/<name>-reg.sock`). */
export type SocketPath = string & { readonly __brand: 'SocketPath' };

export function socketPathOf(p: string): SocketPath {
  return p as SocketPath;
}

/** The plugin types of the kubelet registration API; only CSIPlugin has a handler in Stowage. */
export const PLUGIN_TYPES = ['CSIPlugin', 'DevicePlugin', 'DRAPlugin'] as const;
export type PluginType = (typeof PLUGIN_TYPES)[number];

export function isPluginType(s: string): s is PluginType {
  return (PLUGIN_TYPES as readonly string[]).includes(s);
}

/** A socket the watcher has seen; `timestamp` changes whenever the file is (re)created. */
export interface DesiredPlugin {
  readonly socketPath: SocketPath;
  readonly timestamp: number;
}

/** A plugin registered (or being registered) from one socket. */
export interface RegisteredPlugin {
  readonly socketPath: SocketPath;
  /** The desired-state timestamp this registration answers. */
  readonly timestamp: number;
  readonly type: PluginType;
  readonly name: string;
  /** The plugin's service endpoint (PluginInfo.endpoint, or the socket itself when empty). */
  readonly endpoint: string;
}
