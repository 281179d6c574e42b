import { realClock, type Clock } from '../../../util/backoff.js';
import type { DesiredPlugin, SocketPath } from './types.js';

/**
 * Registration sockets present on disk. Written only by the plugin watcher; read by the
 * reconciler loop. Synchronous: no method awaits, so each call is atomic.
 */
export interface DesiredStateOfWorld {
  /**
   * Adds the socket, or refreshes its timestamp when present (the file was re-created: the plugin
   * must register again). Timestamps strictly increase, even within one clock tick.
   */
  addOrUpdatePlugin(socketPath: SocketPath): void;
  /** Removes the socket; a no-op when absent. */
  removePlugin(socketPath: SocketPath): void;
  isAdded(socketPath: SocketPath): boolean;
  /** Every desired socket; a fresh array (of frozen entries) on every call. */
  pluginsToRegister(): DesiredPlugin[];
}

export function newDesiredStateOfWorld(clock: Clock = realClock): DesiredStateOfWorld {
  return new Dsw(clock);
}

class Dsw implements DesiredStateOfWorld {
  private readonly plugins = new Map<SocketPath, DesiredPlugin>();
  private last = 0;

  constructor(private readonly clock: Clock) {}

  addOrUpdatePlugin(socketPath: SocketPath): void {
    const ts = Math.max(this.clock.now(), this.last + 1);
    this.last = ts;
    this.plugins.set(socketPath, Object.freeze({ socketPath, timestamp: ts }));
  }

  removePlugin(socketPath: SocketPath): void {
    this.plugins.delete(socketPath);
  }

  isAdded(socketPath: SocketPath): boolean {
    return this.plugins.has(socketPath);
  }

  pluginsToRegister(): DesiredPlugin[] {
    return [...this.plugins.values()];
  }
}
