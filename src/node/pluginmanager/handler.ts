import type { PluginType, RegisteredPlugin, SocketPath } from './cache/types.js';

/** What a plugin told us about itself, with the endpoint resolved (empty → the socket). */
export interface PluginRegistration {
  readonly socketPath: SocketPath;
  readonly type: PluginType;
  readonly name: string;
  readonly endpoint: string;
  readonly versions: readonly string[];
}

/**
 * Consumer of one plugin type (the kubelet's PluginHandler). Validation runs before the plugin
 * enters the actual state; register after; deregister after it has left it.
 */
export interface PluginHandler {
  /** Throws PluginRefusedError when the plugin may not register; nothing may be changed. */
  validatePlugin(p: PluginRegistration): void;
  /** Makes the plugin usable. On failure it must undo what it did, then throw. */
  registerPlugin(p: PluginRegistration, signal: AbortSignal): Promise<void>;
  /** Forgets the plugin; retries its own cleanup and does not throw for expected failures. */
  deregisterPlugin(p: RegisteredPlugin, signal: AbortSignal): Promise<void>;
}

/** Told about every registration outcome (status reporting, metrics). Must not throw. */
export interface RegistrationObserver {
  registered(p: RegisteredPlugin): void;
  /**
   * `name` is the plugin's own when GetInfo answered, else guessed from `<name>-reg.sock`;
   * `unreachable`: nothing answered on the socket (stale file or plugin gone).
   */
  failed(p: { socketPath: SocketPath; type?: string; name: string }, reason: string, unreachable: boolean): void;
  deregistered(p: RegisteredPlugin): void;
  /** The socket file is gone: forget failures recorded for it. */
  socketRemoved(socketPath: SocketPath): void;
}
