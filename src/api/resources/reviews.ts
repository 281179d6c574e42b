/**
 * The "who am I / can I" kinds: authentication.k8s.io/v1 SelfSubjectReview and
 * authorization.k8s.io/v1 SelfSubjectAccessReview and SelfSubjectRulesReview. Create-only virtual
 * resources as in Kubernetes: a POST answers with the object and its status filled by the
 * server's own authenticator and authorizer; nothing is stored.
 */
import type { FieldCause } from '../../util/errors.js';
import type { RequestAttributes } from '../authz.js';
import { objectAt, strAt } from './corehelpers.js';
import { baseResourceDef } from './common.js';
import { invalid, required } from './fielderrors.js';
import { nameColumn } from './printing.js';
import type { KubeObject, ResourceDef, ReviewContext } from './types.js';

const noCauses = (): FieldCause[] => [];

function reviewDef(
  group: string,
  kind: string,
  plural: string,
  review: (obj: KubeObject, ctx: ReviewContext) => Record<string, unknown>,
  validate: (obj: KubeObject) => FieldCause[] = noCauses,
  version = 'v1',
): ResourceDef {
  return {
    ...baseResourceDef({
      group,
      version,
      kind,
      plural,
      namespaced: false,
      hasStatus: false,
      verbs: ['create'],
      columns: [nameColumn()],
      row: (o) => [o.metadata.name ?? ''],
      validateCreate: validate,
      validateUpdate: noCauses,
    }),
    review(obj, ctx) {
      // Kubernetes answers with the request's object (no name, uid or resourceVersion given) and its status.
      return { ...obj, apiVersion: `${group}/${version}`, kind, status: review(obj, ctx) };
    },
  };
}

const whoAmI = (_obj: KubeObject, { user }: ReviewContext): Record<string, unknown> => ({
  userInfo: {
    username: user.name,
    ...(user.uid ? { uid: user.uid } : {}),
    groups: [...user.groups],
    ...(user.extra ? { extra: user.extra } : {}),
  },
});

export const selfSubjectReviewResource = reviewDef(
  'authentication.k8s.io',
  'SelfSubjectReview',
  'selfsubjectreviews',
  whoAmI,
);

/** kubectl 1.27 asks `auth whoami` of v1beta1 only (kube serves it through 1.33). */
export const selfSubjectReviewV1beta1Resource = reviewDef(
  'authentication.k8s.io',
  'SelfSubjectReview',
  'selfsubjectreviews',
  whoAmI,
  noCauses,
  'v1beta1',
);

/** ValidateSelfSubjectAccessReviewSpec: exactly one of resourceAttributes and nonResourceAttributes. */
function validateAccessReview(obj: KubeObject): FieldCause[] {
  const spec = objectAt(obj, 'spec') ?? {};
  const res = objectAt(spec, 'resourceAttributes');
  const nonRes = objectAt(spec, 'nonResourceAttributes');
  if (res && nonRes)
    return [
      invalid(
        'spec.nonResourceAttributes',
        JSON.stringify(nonRes),
        'cannot be specified in combination with resourceAttributes',
      ),
    ];
  if (!res && !nonRes)
    return [
      required(
        'spec.resourceAttributes',
        'exactly one of nonResourceAttributes or resourceAttributes must be specified',
      ),
    ];
  return [];
}

export const selfSubjectAccessReviewResource = reviewDef(
  'authorization.k8s.io',
  'SelfSubjectAccessReview',
  'selfsubjectaccessreviews',
  (obj, { user, authorizer }) => {
    const spec = objectAt(obj, 'spec') ?? {};
    const res = objectAt(spec, 'resourceAttributes');
    const nonRes = objectAt(spec, 'nonResourceAttributes');
    const attrs: RequestAttributes = res
      ? {
          kind: 'resource',
          user,
          verb: strAt(res, 'verb'),
          group: strAt(res, 'group'),
          resource: strAt(res, 'resource'),
          subresource: strAt(res, 'subresource') || undefined,
          namespace: strAt(res, 'namespace') || undefined,
          name: strAt(res, 'name') || undefined,
        }
      : { kind: 'nonResource', user, verb: strAt(nonRes, 'verb'), path: strAt(nonRes, 'path') };
    const d = authorizer.authorize(attrs);
    return { allowed: d.allowed, ...(d.denied ? { denied: true } : {}), ...(d.reason ? { reason: d.reason } : {}) };
  },
  validateAccessReview,
);

export const selfSubjectRulesReviewResource = reviewDef(
  'authorization.k8s.io',
  'SelfSubjectRulesReview',
  'selfsubjectrulesreviews',
  (obj, { user, authorizer }) => {
    const rules = authorizer.rulesFor(user, strAt(objectAt(obj, 'spec'), 'namespace'));
    return {
      resourceRules: rules.resourceRules,
      nonResourceRules: rules.nonResourceRules,
      incomplete: rules.incomplete,
    };
  },
);
