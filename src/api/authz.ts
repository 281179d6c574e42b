/**
 * Who a request comes from and what it may do. The server asks one Authorizer about every
 * authenticated request, and the SelfSubject*Review kinds ask the same one, so `kubectl auth can-i`
 * stays true as policies are added (node identities limited to their node, other users).
 */
import { forbidden } from './status.js';

/** Who made a request (authentication's answer). */
export interface UserInfo {
  readonly name: string;
  readonly groups: readonly string[];
  readonly uid?: string;
  /** Extra attributes (authentication.k8s.io's user extra): key → values. */
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** Every authenticated user is also in this group (kube-apiserver adds it). */
export const AUTHENTICATED_GROUP = 'system:authenticated';
/** Kubernetes' superuser group: allowed everything. */
export const MASTERS_GROUP = 'system:masters';

/** What a request asks to do: apiserver's authorizer.Attributes. */
export type RequestAttributes =
  | {
      readonly kind: 'resource';
      readonly user: UserInfo;
      /** get, list, watch, create, update, patch, delete, deletecollection. */
      readonly verb: string;
      readonly group: string;
      readonly resource: string;
      readonly subresource?: string;
      readonly namespace?: string;
      /** The object's name; for a list or watch, the name a `metadata.name=` field selector requires (as kube's RequestInfo). */
      readonly name?: string;
      /** The list's or watch's raw fieldSelector (the Node authorizer reads `spec.nodeName=` from it). */
      readonly fieldSelector?: string;
    }
  | { readonly kind: 'nonResource'; readonly user: UserInfo; readonly verb: string; readonly path: string };

export interface Decision {
  readonly allowed: boolean;
  /** Set when a policy refused outright (a refusal no other authorizer may override). */
  readonly denied?: boolean;
  readonly reason: string;
}

export interface ResourceRule {
  readonly verbs: readonly string[];
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly resourceNames?: readonly string[];
}
export interface NonResourceRule {
  readonly verbs: readonly string[];
  readonly nonResourceURLs: readonly string[];
}

/** What a user may do in a namespace, as SelfSubjectRulesReview reports it. */
export interface Rules {
  readonly resourceRules: readonly ResourceRule[];
  readonly nonResourceRules: readonly NonResourceRule[];
  /** True when the authorizer cannot list everything it would allow. */
  readonly incomplete: boolean;
}

/**
 * Decides requests. Pure over its policy: no I/O, answers synchronously. `rulesFor` must agree with
 * `authorize` (a rule it lists is a request `authorize` allows).
 */
export interface Authorizer {
  authorize(a: RequestAttributes): Decision;
  rulesFor(user: UserInfo, namespace: string): Rules;
}

/** Rules granted to the members of a group, or to one user (a ClusterRoleBinding's subject). */
export interface GroupRules {
  readonly group?: string;
  readonly user?: string;
  readonly resourceRules: readonly ResourceRule[];
  readonly nonResourceRules: readonly NonResourceRule[];
}

/**
 * Kubernetes' bootstrap policy as Stowage needs it: system:masters may do everything; every
 * authenticated user has system:basic-user (the self-subject reviews), system:discovery and
 * system:public-info-viewer (discovery, OpenAPI, health, version).
 */
export const ADMIN_POLICY: readonly GroupRules[] = [
  {
    group: MASTERS_GROUP,
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
  },
  {
    group: AUTHENTICATED_GROUP,
    resourceRules: [
      { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] },
      {
        verbs: ['create'],
        apiGroups: ['authorization.k8s.io'],
        resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
      },
    ],
    nonResourceRules: [
      {
        verbs: ['get'],
        nonResourceURLs: [
          '/api',
          '/api/*',
          '/apis',
          '/apis/*',
          '/healthz',
          '/livez',
          '/openapi',
          '/openapi/*',
          '/readyz',
          '/version',
          '/version/',
        ],
      },
    ],
  },
];

/** The controllers' user (kube-controller-manager's credential). */
export const CONTROLLER_MANAGER_USER = 'system:kube-controller-manager';
/** The group of CSI controller sidecars (provisioner, attacher, resizer, capacity). */
export const CSI_SIDECARS_GROUP = 'stowage:csi-sidecars';

/**
 * The in-cluster components' grants beside ADMIN_POLICY. The controllers touch every kind (the
 * namespace controller and the garbage collector delete anything), so they may do everything on
 * resources, but are not masters. The CSI sidecars get the rules of the upstream sidecars' RBAC.
 */
export const COMPONENT_POLICY: readonly GroupRules[] = [
  {
    user: CONTROLLER_MANAGER_USER,
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
    nonResourceRules: [],
  },
  {
    group: CSI_SIDECARS_GROUP,
    resourceRules: [
      {
        verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
        apiGroups: [''],
        resources: ['persistentvolumes'],
      },
      {
        verbs: ['get', 'list', 'watch', 'update', 'patch'],
        apiGroups: [''],
        resources: ['persistentvolumeclaims', 'persistentvolumeclaims/status'],
      },
      { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['nodes', 'pods', 'secrets'] },
      {
        verbs: ['list', 'watch', 'create', 'update', 'patch'],
        apiGroups: ['', 'events.k8s.io'],
        resources: ['events'],
      },
      {
        verbs: ['get', 'list', 'watch'],
        apiGroups: ['storage.k8s.io'],
        resources: ['storageclasses', 'csinodes', 'csidrivers'],
      },
      {
        verbs: ['get', 'list', 'watch', 'update', 'patch'],
        apiGroups: ['storage.k8s.io'],
        resources: ['volumeattachments', 'volumeattachments/status'],
      },
      {
        verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
        apiGroups: ['storage.k8s.io'],
        resources: ['csistoragecapacities'],
      },
      {
        verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
      },
      {
        verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
        apiGroups: ['snapshot.storage.k8s.io'],
        resources: ['*'],
      },
    ],
    nonResourceRules: [],
  },
];

const matches = (list: readonly string[], v: string): boolean => list.includes('*') || list.includes(v);

/** RBAC's rule match: `*` matches anything; a URL ending in `*` matches by prefix. */
export function rulesAllow(rules: Rules, a: RequestAttributes): boolean {
  if (a.kind === 'nonResource') {
    return rules.nonResourceRules.some(
      (r) =>
        matches(r.verbs, a.verb) &&
        r.nonResourceURLs.some(
          (u) => u === '*' || u === a.path || (u.endsWith('*') && a.path.startsWith(u.slice(0, -1))),
        ),
    );
  }
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  return rules.resourceRules.some(
    (r) =>
      matches(r.verbs, a.verb) &&
      matches(r.apiGroups, a.group) &&
      matches(r.resources, resource) &&
      (!r.resourceNames?.length || (a.name !== undefined && r.resourceNames.includes(a.name))),
  );
}

/** An authorizer over group rules (no namespaced grants yet, so the namespace does not matter). */
export function newGroupRulesAuthorizer(policy: readonly GroupRules[]): Authorizer {
  const rulesFor = (u: UserInfo): Rules => {
    const mine = policy.filter(
      (p) => (p.group !== undefined && u.groups.includes(p.group)) || (p.user !== undefined && p.user === u.name),
    );
    return {
      resourceRules: mine.flatMap((p) => p.resourceRules),
      nonResourceRules: mine.flatMap((p) => p.nonResourceRules),
      incomplete: false,
    };
  };
  return {
    authorize: (a) => ({ allowed: rulesAllow(rulesFor(a.user), a), reason: '' }),
    rulesFor,
  };
}

/**
 * kube-apiserver's union of authorization modes (`--authorization-mode=Node,RBAC`): the first
 * allow or outright denial wins; otherwise the refusal carries every mode's reason.
 */
export function newUnionAuthorizer(list: readonly Authorizer[]): Authorizer {
  return {
    authorize: (a) => {
      const reasons: string[] = [];
      for (const z of list) {
        const d = z.authorize(a);
        if (d.allowed || d.denied) return d;
        if (d.reason) reasons.push(d.reason);
      }
      return { allowed: false, reason: reasons.join('\n') };
    },
    rulesFor: (user, namespace) => {
      const all = list.map((z) => z.rulesFor(user, namespace));
      return {
        resourceRules: all.flatMap((r) => r.resourceRules),
        nonResourceRules: all.flatMap((r) => r.nonResourceRules),
        incomplete: all.some((r) => r.incomplete),
      };
    },
  };
}

/** Stowage's one policy today: ADMIN_POLICY. */
export function newAdminAuthorizer(): Authorizer {
  return newGroupRulesAuthorizer(ADMIN_POLICY);
}

/** A refused request's 403, with kube-apiserver's message. */
export function forbiddenFor(a: RequestAttributes, d: Decision): Error {
  const why = d.reason ? `: ${d.reason}` : '';
  if (a.kind === 'nonResource')
    return forbidden(`forbidden: User "${a.user.name}" cannot ${a.verb} path "${a.path}"${why}`);
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const qualified = a.group ? `${a.resource}.${a.group}` : a.resource;
  const scope = a.namespace ? ` in the namespace "${a.namespace}"` : ' at the cluster scope';
  return forbidden(
    `${qualified}${a.name ? ` "${a.name}"` : ''} is forbidden: User "${a.user.name}" cannot ${a.verb} resource "${resource}" in API group "${a.group}"${scope}${why}`,
    { group: a.group, resource: a.resource, name: a.name },
  );
}
