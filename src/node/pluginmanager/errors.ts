import { StowageError } from '../../util/errors.js';

/**
 * The plugin may not register as it is (no handler for its type, no 1.x version, a better
 * registration of the same name exists...). Told to the plugin through NotifyRegistrationStatus.
 * Retrying cannot help until the plugin changes, but the socket is still retried with backoff:
 * a plugin that restarts with another version recreates its socket anyway.
 */
export class PluginRefusedError extends StowageError {
  readonly code = 'Invalid';
  readonly retryable = false;
}

/** Nothing answers on the registration socket (a stale file, or a registrar still starting). */
export class PluginUnreachableError extends StowageError {
  readonly code = 'Unavailable';
  readonly retryable = true;
}
