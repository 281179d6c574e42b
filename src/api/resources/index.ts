import type { ResourceDef } from './types.js';
import { namespaceResource } from './namespace.js';
import { nodeResource } from './node.js';
import { podResource } from './pod.js';
import { eventResource } from './event.js';
import { secretResource } from './secret.js';
import { configMapResource } from './configmap.js';
import { leaseResource } from './lease.js';
import { persistentVolumeResource } from './persistentvolume.js';
import { persistentVolumeClaimResource } from './persistentvolumeclaim.js';
import { storageClassResource } from './storageclass.js';
import { csiDriverResource } from './csidriver.js';
import { csiNodeResource } from './csinode.js';
import { volumeAttachmentResource } from './volumeattachment.js';
import { csiStorageCapacityResource } from './csistoragecapacity.js';
import { podDisruptionBudgetResource } from './poddisruptionbudget.js';
import { serviceResource } from './service.js';
import { endpointSliceResource, endpointsResource } from './endpoints.js';
import { deploymentResource } from './deployment.js';
import { replicaSetResource } from './replicaset.js';
import {
  selfSubjectAccessReviewResource,
  selfSubjectReviewResource,
  selfSubjectReviewV1beta1Resource,
  selfSubjectRulesReviewResource,
} from './reviews.js';
import { statefulSetResource } from './statefulset.js';
import { daemonSetResource } from './daemonset.js';
import { controllerRevisionResource } from './controllerrevision.js';
import { jobResource } from './job.js';
import { customResourceDefinitionResource } from '../apiextensions/crd.js';

/** Every kind the API server serves, core/v1 first, then storage.k8s.io/v1 and coordination.k8s.io/v1. */
export const ALL_RESOURCES: readonly ResourceDef[] = [
  namespaceResource,
  nodeResource,
  podResource,
  eventResource,
  secretResource,
  configMapResource,
  persistentVolumeResource,
  persistentVolumeClaimResource,
  storageClassResource,
  csiDriverResource,
  csiNodeResource,
  volumeAttachmentResource,
  csiStorageCapacityResource,
  leaseResource,
  podDisruptionBudgetResource,
  serviceResource,
  endpointsResource,
  endpointSliceResource,
  deploymentResource,
  replicaSetResource,
  statefulSetResource,
  daemonSetResource,
  controllerRevisionResource,
  jobResource,
  customResourceDefinitionResource,
  selfSubjectReviewResource,
  selfSubjectReviewV1beta1Resource,
  selfSubjectAccessReviewResource,
  selfSubjectRulesReviewResource,
];

export {
  namespaceResource,
  nodeResource,
  podResource,
  eventResource,
  secretResource,
  configMapResource,
  leaseResource,
  persistentVolumeResource,
  persistentVolumeClaimResource,
  storageClassResource,
  csiDriverResource,
  csiNodeResource,
  volumeAttachmentResource,
  csiStorageCapacityResource,
};
