/**
 * Kubernetes vocabulary shared by every component: well-known names, phases, quantities, the
 * class of a claim or volume, object keys, node-selector matching, disruption budgets. A leaf: imports nothing of ours.
 */
export * from './names.js';
export * from './phases.js';
export * from './quantity.js';
export * from './class.js';
export * from './keys.js';
export * from './nodeselector.js';
export * from './ephemeral.js';
export * from './disruption.js';
export * from './node.js';
export * from './version.js';
