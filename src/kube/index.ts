/**
 * Kubernetes vocabulary shared by every component: well-known names, phases, quantities, the
 * class of a claim or volume, object keys, node-selector matching, label and field selectors, name
 * validation, disruption budgets. Imports only util/.
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
export * from './validation.js';
export * from './selectors.js';
export * from './meta.js';
