/** `stowage csi-registrar`: the same flags as node-driver-registrar. */
import { parseDuration } from '../../cli/flags.js';
import { Command } from 'commander';
import { runRegistrar, DEFAULT_REGISTRAR_TIMEOUT_MS } from './registrar.js';
import { newLogger } from '../../util/log.js';

export { parseDuration };

export function registrarCommand(program: Command): Command {
  return program
    .command('csi-registrar')
    .description('register a CSI driver with the kubelet plugin registry (node-driver-registrar)')
    .requiredOption('--csi-address <address>', 'CSI driver socket as seen by this process (unix:// optional)')
    .requiredOption('--kubelet-registration-path <path>', 'CSI driver socket as seen by the kubelet')
    .requiredOption('--plugin-registration-path <dir>', 'kubelet plugin registry directory (e.g. /var/lib/kubelet/plugins_registry)')
    .option('--http-endpoint <host:port>', 'serve /healthz here')
    .option('--timeout <duration>', 'deadline for calls to the driver', parseDuration, DEFAULT_REGISTRAR_TIMEOUT_MS)
    .action(async (opts: { csiAddress: string; kubeletRegistrationPath: string; pluginRegistrationPath: string; httpEndpoint?: string; timeout: number }) => {
      const ac = new AbortController();
      const stop = (sig: NodeJS.Signals): void => ac.abort(new Error(`received ${sig}`));
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
      try {
        await runRegistrar({
          csiAddress: opts.csiAddress,
          kubeletRegistrationPath: opts.kubeletRegistrationPath,
          pluginRegistrationPath: opts.pluginRegistrationPath,
          httpEndpoint: opts.httpEndpoint,
          timeoutMs: opts.timeout,
          signal: ac.signal,
          log: newLogger('csi-registrar'),
        });
      } catch (e) {
        process.stderr.write(`stowage csi-registrar: ${e instanceof Error ? e.message : String(e)}\n`);
        process.exitCode = 1;
      } finally {
        process.off('SIGTERM', stop);
        process.off('SIGINT', stop);
      }
    });
}
