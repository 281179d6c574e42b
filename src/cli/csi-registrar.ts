/** `stowage csi-registrar`: the built-in node-driver-registrar, with its flags. */
import type { Command } from 'commander';
import { DEFAULT_REGISTRAR_TIMEOUT_MS, runRegistrar } from '../csi/registrar/registrar.js';
import { newLogger } from '../util/log.js';
import { durationOption, parseDuration } from './flags.js';
import { runUntilSignalled } from './signals.js';

interface RegistrarFlags {
  readonly csiAddress: string;
  readonly kubeletRegistrationPath: string;
  readonly pluginRegistrationPath: string;
  readonly httpEndpoint?: string;
  readonly timeout: number;
}

export function registrarCommand(program: Command): Command {
  return program
    .command('csi-registrar')
    .description('register a CSI driver with the kubelet plugin registry (node-driver-registrar)')
    .requiredOption('--csi-address <address>', 'CSI driver socket as seen by this process (unix:// optional)')
    .requiredOption('--kubelet-registration-path <path>', 'CSI driver socket as seen by the kubelet')
    .requiredOption(
      '--plugin-registration-path <dir>',
      'kubelet plugin registry directory (e.g. /var/lib/kubelet/plugins_registry)',
    )
    .option('--http-endpoint <host:port>', 'serve /healthz here')
    .addOption(
      durationOption(
        '--timeout <duration>',
        'deadline for calls to the driver',
        DEFAULT_REGISTRAR_TIMEOUT_MS,
        parseDuration,
      ),
    )
    .action(async (f: RegistrarFlags) => {
      try {
        await runUntilSignalled((signal) =>
          runRegistrar({
            csiAddress: f.csiAddress,
            kubeletRegistrationPath: f.kubeletRegistrationPath,
            pluginRegistrationPath: f.pluginRegistrationPath,
            httpEndpoint: f.httpEndpoint,
            timeoutMs: f.timeout,
            signal,
            log: newLogger('csi-registrar'),
          }),
        );
      } catch (e) {
        process.stderr.write(`stowage csi-registrar: ${e instanceof Error ? e.message : String(e)}\n`);
        process.exitCode = 1;
      }
    });
}
