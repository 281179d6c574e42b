import type { IdentityHandlers, PluginCapability } from '../proto/types.js';
import { VENDOR_VERSION, unary, type HostpathDriver } from './driver.js';

/**
 * Plugin capabilities: a controller service, topology (volumes live on one node), and online
 * expansion (a block file grows under a live loop device; a directory has nothing to grow).
 */
export function pluginCapabilities(sharedStorage = false): PluginCapability[] {
  return [
    { service: { type: 'CONTROLLER_SERVICE' } },
    // Shared storage is reachable from every node: no accessibility constraints.
    ...(sharedStorage ? [] : [{ service: { type: 'VOLUME_ACCESSIBILITY_CONSTRAINTS' as const } }]),
    { volumeExpansion: { type: 'ONLINE' } },
  ];
}

export function identityHandlers(d: HostpathDriver): IdentityHandlers {
  const log = d.log;
  return {
    GetPluginInfo: unary(log, 'GetPluginInfo', async () => ({
      name: d.config.driverName,
      vendorVersion: VENDOR_VERSION,
      manifest: {},
    })),
    GetPluginCapabilities: unary(log, 'GetPluginCapabilities', async () => ({
      capabilities: pluginCapabilities(d.config.sharedStorage === true),
    })),
    Probe: unary(log, 'Probe', async () => ({ ready: { value: true } })),
  };
}
