/** Closed vocabularies of object phases (core/v1 at v1.30), each one table and its union. */

export const PV_PHASES = ['Pending', 'Available', 'Bound', 'Released', 'Failed'] as const;
export type PvPhase = (typeof PV_PHASES)[number];

export const PVC_PHASES = ['Pending', 'Bound', 'Lost'] as const;
export type PvcPhase = (typeof PVC_PHASES)[number];

export const POD_PHASES = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'] as const;
export type PodPhase = (typeof POD_PHASES)[number];

export const NAMESPACE_PHASES = ['Active', 'Terminating'] as const;
export type NamespacePhase = (typeof NAMESPACE_PHASES)[number];
