import { InvalidError } from '../../../util/errors.js';
import type { RegisteredPlugin, SocketPath } from './types.js';

/**
 * Plugins registered, or being registered, keyed by socket path. Written only by the register
 * and unregister operations; read by the reconciler loop. Synchronous: each call is atomic.
 */
export interface ActualStateOfWorld {
  /**
   * Records a registration, replacing any earlier one from the same socket.
   * Throws InvalidError when the socket path or name is empty.
   */
  addPlugin(p: RegisteredPlugin): void;
  /** Removes the socket's registration; a no-op when absent. */
  removePlugin(socketPath: SocketPath): void;
  /**
   * Removes the registration only if it still answers `timestamp` (a newer one is kept).
   * Returns whether something was removed.
   */
  removeIfTimestamp(socketPath: SocketPath, timestamp: number): boolean;
  /** The registration from this socket, a copy; undefined when none. */
  get(socketPath: SocketPath): RegisteredPlugin | undefined;
  /** True when the socket is registered for exactly this desired timestamp. */
  isRegistered(socketPath: SocketPath, timestamp: number): boolean;
  /** Every registration; a fresh array on every call. */
  registeredPlugins(): RegisteredPlugin[];
}

export function newActualStateOfWorld(): ActualStateOfWorld {
  return new Asw();
}

class Asw implements ActualStateOfWorld {
  private readonly plugins = new Map<SocketPath, RegisteredPlugin>();

  addPlugin(p: RegisteredPlugin): void {
    if (p.socketPath === '') throw new InvalidError('actual state: plugin socket path is empty');
    if (p.name === '') throw new InvalidError(`actual state: plugin at ${p.socketPath} has no name`);
    this.plugins.set(p.socketPath, Object.freeze({ ...p }));
  }

  removePlugin(socketPath: SocketPath): void {
    this.plugins.delete(socketPath);
  }

  removeIfTimestamp(socketPath: SocketPath, timestamp: number): boolean {
    if (this.plugins.get(socketPath)?.timestamp !== timestamp) return false;
    this.plugins.delete(socketPath);
    return true;
  }

  get(socketPath: SocketPath): RegisteredPlugin | undefined {
    const p = this.plugins.get(socketPath);
    return p ? { ...p } : undefined;
  }

  isRegistered(socketPath: SocketPath, timestamp: number): boolean {
    return this.plugins.get(socketPath)?.timestamp === timestamp;
  }

  registeredPlugins(): RegisteredPlugin[] {
    return [...this.plugins.values()];
  }
}
