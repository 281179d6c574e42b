import type { PluginName, VolumeSpec } from '../types.js';
import { csiPlugin } from './csi.js';
import { emptyDirPlugin } from './empty-dir.js';
import { hostPathPlugin } from './host-path.js';
import { localPlugin } from './local.js';
import type { SpecSource, VolumePlugin } from './plugin.js';
import { configMapPlugin, downwardApiPlugin, projectedPlugin, secretPlugin } from './projection/plugins.js';

/** Every volume plugin of the node, by name (the kubelet's plugin manager list). */
export const VOLUME_PLUGINS: Readonly<Record<PluginName, VolumePlugin>> = {
  'kubernetes.io/csi': csiPlugin,
  'kubernetes.io/empty-dir': emptyDirPlugin,
  'kubernetes.io/host-path': hostPathPlugin,
  'kubernetes.io/local-volume': localPlugin,
  'kubernetes.io/configmap': configMapPlugin,
  'kubernetes.io/secret': secretPlugin,
  'kubernetes.io/downward-api': downwardApiPlugin,
  'kubernetes.io/projected': projectedPlugin,
};

export type PluginMatch =
  { readonly plugin: VolumePlugin } | { readonly none: true } | { readonly many: readonly PluginName[] };

/**
 * kubelet FindPluginBySpec: the one place that decides which plugin serves a volume. Every plugin
 * is asked; none (an unsupported source) and more than one (an invalid spec) are both refusals.
 */
export function findPluginBySpec(src: SpecSource): PluginMatch {
  const matches = Object.values(VOLUME_PLUGINS).filter((p) => p.canSupport(src));
  if (matches.length === 1) return { plugin: matches[0]! };
  return matches.length === 0 ? { none: true } : { many: matches.map((p) => p.name) };
}

/** The plugin that resolved a spec (its name is recorded in the spec). */
export function pluginFor(spec: Pick<VolumeSpec, 'plugin'>): VolumePlugin {
  return VOLUME_PLUGINS[spec.plugin];
}
