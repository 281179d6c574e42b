/**
 * Labels, annotations, finalizers and condition vocabulary of the workload controllers
 * (StatefulSet and Job), as Kubernetes spells them.
 */

/** On every StatefulSet pod: its own name (a Service per pod can select it). */
export const STATEFULSET_POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
/** On every StatefulSet pod (1.28+): its ordinal. */
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';
/** The ControllerRevision a pod was made from (`<sts>-<hash>`). */
export const CONTROLLER_REVISION_HASH_LABEL = 'controller-revision-hash';

/** The Job's generated selector labels; the unprefixed ones are kept for older clients. */
export const JOB_CONTROLLER_UID_LABEL = 'batch.kubernetes.io/controller-uid';
export const LEGACY_JOB_CONTROLLER_UID_LABEL = 'controller-uid';
export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';
export const LEGACY_JOB_NAME_LABEL = 'job-name';
/** Keeps a Job's pod until the Job controller has counted it. */
export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';

export const JOB_CONDITION_TYPES = ['Suspended', 'Complete', 'Failed', 'FailureTarget', 'SuccessCriteriaMet'] as const;
export type JobConditionType = (typeof JOB_CONDITION_TYPES)[number];
