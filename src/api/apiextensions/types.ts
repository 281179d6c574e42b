/** apiextensions.k8s.io/v1 CustomResourceDefinition as Stowage reads it (the fields it uses). */
import type { KubeObject } from '../resources/types.js';
import type { JSONSchemaProps } from './schema/types.js';

export const CRD_GROUP = 'apiextensions.k8s.io';
/** The finalizer a CRD gets when it is deleted: its objects are removed first. */
export const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

export interface CRDNames {
  plural: string;
  singular?: string;
  kind: string;
  listKind?: string;
  shortNames?: string[];
  categories?: string[];
}

export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

export interface ScaleSpec {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface CRDVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: JSONSchemaProps };
  subresources?: { status?: object; scale?: ScaleSpec };
  additionalPrinterColumns?: PrinterColumn[];
  selectableFields?: Array<{ jsonPath: string }>;
}

export interface CRDCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface CRDSpec {
  group: string;
  names: CRDNames;
  scope: 'Namespaced' | 'Cluster';
  versions: CRDVersion[];
  conversion?: { strategy: string; webhook?: unknown };
  preserveUnknownFields?: boolean;
}

export interface CRDStatus {
  conditions?: CRDCondition[];
  acceptedNames?: CRDNames;
  storedVersions?: string[];
}

export interface CRD extends KubeObject {
  spec: CRDSpec;
  status?: CRDStatus;
}

export const CONDITION_TYPES = ['NamesAccepted', 'Established', 'Terminating', 'NonStructuralSchema'] as const;
export type CRDConditionType = (typeof CONDITION_TYPES)[number];

export function condition(crd: CRD, type: CRDConditionType): CRDCondition | undefined {
  return crd.status?.conditions?.find((c) => c.type === type);
}

export function isEstablished(crd: CRD): boolean {
  return condition(crd, 'Established')?.status === 'True';
}

/** The storage version's name (validation guarantees exactly one). */
export function storageVersion(crd: CRD): string | undefined {
  return crd.spec.versions.find((v) => v.storage)?.name;
}
