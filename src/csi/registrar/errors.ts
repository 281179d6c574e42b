import { StowageError } from '../../util/errors.js';

/**
 * The kubelet answered NotifyRegistrationStatus(false). Like node-driver-registrar we stop, so a
 * supervisor restarts us and registration is tried afresh; retryable for that reason.
 */
export class RegistrationRefusedError extends StowageError {
  readonly code = 'Internal';
  readonly retryable = true;
  constructor(readonly reason: string) {
    super(`plugin registration refused by the kubelet: ${reason || '(no reason given)'}`);
  }
}

/** The driver's GetPluginInfo returned an empty name: nothing to register under. */
export class EmptyDriverNameError extends StowageError {
  readonly code = 'Invalid';
  readonly retryable = false;
  constructor(endpoint: string) {
    super(`CSI driver at ${endpoint} returned an empty name from GetPluginInfo`);
  }
}
