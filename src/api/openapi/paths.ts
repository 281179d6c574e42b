import type { OpenApiResource } from './resource.js';
import { SCALE_KIND } from '../resources/scale.js';
import { definitionNameFor } from './schemas.js';

/**
 * OpenAPI v3 `paths` for one resource, shaped as kube-apiserver publishes them: every operation
 * carries `x-kubernetes-action` and `x-kubernetes-group-version-kind` (a single object, not the
 * list schemas use), and create/update/patch declare `fieldValidation` inline. kubectl ≥1.29 finds
 * the first PATCH operation whose GVK matches and sends `fieldValidation=Strict` only if that
 * operation lists the parameter — so the /status PATCH (same GVK) must declare it too.
 */

type Action = 'get' | 'list' | 'post' | 'put' | 'patch' | 'delete' | 'deletecollection';

interface Param {
  name: string;
  in: 'path' | 'query';
  description: string;
  required?: boolean;
  schema: Record<string, unknown>;
}

const str = { type: 'string', uniqueItems: true };
const int = { type: 'integer', uniqueItems: true };
const bool = { type: 'boolean', uniqueItems: true };

const P = {
  name: (kind: string): Param => ({
    name: 'name',
    in: 'path',
    description: `name of the ${kind}`,
    required: true,
    schema: str,
  }),
  namespace: {
    name: 'namespace',
    in: 'path',
    description: 'object name and auth scope, such as for teams and projects',
    required: true,
    schema: str,
  },
  pretty: { name: 'pretty', in: 'query', description: "If 'true', then the output is pretty printed.", schema: str },
  dryRun: {
    name: 'dryRun',
    in: 'query',
    description: 'When present, indicates that modifications should not be persisted. Valid value: All.',
    schema: str,
  },
  fieldManager: {
    name: 'fieldManager',
    in: 'query',
    description: 'A name associated with the actor or entity making these changes.',
    schema: str,
  },
  fieldValidation: {
    name: 'fieldValidation',
    in: 'query',
    description:
      'How the server handles unknown or duplicate fields in the request body: Ignore, Warn (the default) or Strict (fail the request with a BadRequest).',
    schema: str,
  },
  force: {
    name: 'force',
    in: 'query',
    description: 'Force apply requests to take ownership of conflicting fields. Only for apply patches.',
    schema: bool,
  },
  gracePeriodSeconds: {
    name: 'gracePeriodSeconds',
    in: 'query',
    description: 'Seconds before the object should be deleted; zero means delete immediately.',
    schema: int,
  },
  propagationPolicy: {
    name: 'propagationPolicy',
    in: 'query',
    description: "Garbage collection policy: 'Orphan', 'Background' or 'Foreground'.",
    schema: str,
  },
  orphanDependents: {
    name: 'orphanDependents',
    in: 'query',
    description: 'Deprecated: use propagationPolicy.',
    schema: bool,
  },
  allowWatchBookmarks: {
    name: 'allowWatchBookmarks',
    in: 'query',
    description: 'Request watch events of type BOOKMARK.',
    schema: bool,
  },
  continue: {
    name: 'continue',
    in: 'query',
    description: 'The continue token of a previous list call, to get the next chunk.',
    schema: str,
  },
  fieldSelector: {
    name: 'fieldSelector',
    in: 'query',
    description: 'A selector restricting the returned objects by their fields.',
    schema: str,
  },
  labelSelector: {
    name: 'labelSelector',
    in: 'query',
    description: 'A selector restricting the returned objects by their labels.',
    schema: str,
  },
  limit: {
    name: 'limit',
    in: 'query',
    description: 'Maximum number of responses to return for a list call.',
    schema: int,
  },
  resourceVersion: {
    name: 'resourceVersion',
    in: 'query',
    description: 'Constrains which resource versions the request may be served from.',
    schema: str,
  },
  resourceVersionMatch: {
    name: 'resourceVersionMatch',
    in: 'query',
    description: 'How resourceVersion applies to list calls: Exact or NotOlderThan.',
    schema: str,
  },
  sendInitialEvents: {
    name: 'sendInitialEvents',
    in: 'query',
    description: 'With watch=true, start the stream with synthetic ADDED events for the current state.',
    schema: bool,
  },
  timeoutSeconds: { name: 'timeoutSeconds', in: 'query', description: 'Timeout for the list/watch call.', schema: int },
  watch: {
    name: 'watch',
    in: 'query',
    description: 'Watch for changes to the described resources and return them as a stream.',
    schema: bool,
  },
} satisfies Record<string, Param | ((k: string) => Param)>;

const LIST_PARAMS: Param[] = [
  P.allowWatchBookmarks,
  P.continue,
  P.fieldSelector,
  P.labelSelector,
  P.limit,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.timeoutSeconds,
  P.watch,
];
const WRITE_PARAMS: Param[] = [P.dryRun, P.fieldManager, P.fieldValidation];
const DELETE_PARAMS: Param[] = [P.dryRun, P.gracePeriodSeconds, P.orphanDependents, P.propagationPolicy];

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const STATUS = 'io.k8s.apimachinery.pkg.apis.meta.v1.Status';
const DELETE_OPTIONS = 'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions';
const PATCH = 'io.k8s.apimachinery.pkg.apis.meta.v1.Patch';
const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
];

function content(schemaName: string, types: readonly string[] = ['application/json']) {
  return Object.fromEntries(types.map((t) => [t, { schema: ref(schemaName) }]));
}
function responses(codes: readonly number[], schemaName: string) {
  const out: Record<string, unknown> = {};
  for (const c of codes)
    out[String(c)] = {
      description: c === 201 ? 'Created' : c === 202 ? 'Accepted' : 'OK',
      content: content(schemaName),
    };
  out['401'] = { description: 'Unauthorized' };
  return out;
}

/** Operation-id group prefix as kube's generator makes it: '' → CoreV1, storage.k8s.io → StorageV1. */
function gvPrefix(group: string, version: string): string {
  const g = group === '' ? 'core' : (group.split('.')[0] as string);
  const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
  return `${cap(g)}${cap(version)}`;
}
function tag(group: string, version: string): string {
  return `${group === '' ? 'core' : (group.split('.')[0] as string)}_${version}`;
}

export function buildPaths(r: OpenApiResource, kindDef: string, listDef: string): Record<string, unknown> {
  const base = r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  const nsPart = r.namespaced ? '/namespaces/{namespace}' : '';
  const scoped = r.namespaced ? 'Namespaced' : '';
  const gvk = { group: r.group, version: r.version, kind: r.kind };
  const pre = gvPrefix(r.group, r.version);
  const tags = [tag(r.group, r.version)];
  const op = (action: Action, operationId: string, description: string, extra: Record<string, unknown>) => ({
    tags,
    description,
    operationId,
    ...extra,
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk,
  });
  const collection = `${base}${nsPart}/${r.plural}`;
  const item = `${collection}/{name}`;
  const pathParams = (withName: boolean): Param[] => [
    ...(withName ? [P.name(r.kind)] : []),
    ...(r.namespaced ? [P.namespace] : []),
    P.pretty,
  ];
  const writeBody = { required: true, content: content(kindDef, ['*/*']) };
  const patchBody = {
    required: true,
    content: Object.fromEntries(PATCH_TYPES.map((t) => [t, { schema: ref(PATCH) }])),
  };
  const paths: Record<string, unknown> = {
    [collection]: {
      get: op('list', `list${pre}${scoped}${r.kind}`, `list or watch objects of kind ${r.kind}`, {
        parameters: LIST_PARAMS,
        responses: responses([200], listDef),
      }),
      post: op('post', `create${pre}${scoped}${r.kind}`, `create a ${r.kind}`, {
        parameters: WRITE_PARAMS,
        requestBody: writeBody,
        responses: responses([200, 201, 202], kindDef),
      }),
      delete: op('deletecollection', `delete${pre}Collection${scoped}${r.kind}`, `delete collection of ${r.kind}`, {
        parameters: [
          ...DELETE_PARAMS,
          ...LIST_PARAMS.filter((p) => p.name !== 'watch' && p.name !== 'allowWatchBookmarks'),
        ],
        requestBody: { content: content(DELETE_OPTIONS, ['*/*']) },
        responses: responses([200], STATUS),
      }),
      parameters: pathParams(false),
    },
    [item]: {
      get: op('get', `read${pre}${scoped}${r.kind}`, `read the specified ${r.kind}`, {
        responses: responses([200], kindDef),
      }),
      put: op('put', `replace${pre}${scoped}${r.kind}`, `replace the specified ${r.kind}`, {
        parameters: WRITE_PARAMS,
        requestBody: writeBody,
        responses: responses([200, 201], kindDef),
      }),
      patch: op('patch', `patch${pre}${scoped}${r.kind}`, `partially update the specified ${r.kind}`, {
        parameters: [...WRITE_PARAMS, P.force],
        requestBody: patchBody,
        responses: responses([200, 201], kindDef),
      }),
      delete: op('delete', `delete${pre}${scoped}${r.kind}`, `delete a ${r.kind}`, {
        parameters: DELETE_PARAMS,
        requestBody: { content: content(DELETE_OPTIONS, ['*/*']) },
        responses: responses([200, 202], STATUS),
      }),
      parameters: pathParams(true),
    },
  };
  if (r.namespaced) {
    paths[`${base}/${r.plural}`] = {
      get: op('list', `list${pre}${r.kind}ForAllNamespaces`, `list or watch objects of kind ${r.kind}`, {
        responses: responses([200], listDef),
      }),
      parameters: [...LIST_PARAMS, P.pretty],
    };
  }
  if (r.hasStatus) {
    paths[`${item}/status`] = {
      get: op('get', `read${pre}${scoped}${r.kind}Status`, `read status of the specified ${r.kind}`, {
        responses: responses([200], kindDef),
      }),
      put: op('put', `replace${pre}${scoped}${r.kind}Status`, `replace status of the specified ${r.kind}`, {
        parameters: WRITE_PARAMS,
        requestBody: writeBody,
        responses: responses([200, 201], kindDef),
      }),
      patch: op('patch', `patch${pre}${scoped}${r.kind}Status`, `partially update status of the specified ${r.kind}`, {
        parameters: [...WRITE_PARAMS, P.force],
        requestBody: patchBody,
        responses: responses([200, 201], kindDef),
      }),
      parameters: pathParams(true),
    };
  }
  for (const sub of r.subresources ?? []) {
    // Partial updates (the namespace controller empties spec.finalizers through namespaces/finalize).
    // Action subresources such as pods/binding are not published, as kube-apiserver's v3 documents
    // have no operation with a GVK of the parent kind for them.
    if (sub.type === 'scale') {
      // kube publishes <kind>/scale with the Scale's own kind (autoscaling/v1), read, replace and patch.
      const scaleDef = definitionNameFor(SCALE_KIND.group, SCALE_KIND.version, SCALE_KIND.kind);
      const scaleGvk = { 'x-kubernetes-group-version-kind': { ...SCALE_KIND } };
      paths[`${item}/scale`] = {
        get: {
          ...op('get', `read${pre}${scoped}${r.kind}Scale`, `read scale of the specified ${r.kind}`, {
            responses: responses([200], scaleDef),
          }),
          ...scaleGvk,
        },
        put: {
          ...op('put', `replace${pre}${scoped}${r.kind}Scale`, `replace scale of the specified ${r.kind}`, {
            parameters: WRITE_PARAMS,
            requestBody: { required: true, content: content(scaleDef, ['*/*']) },
            responses: responses([200, 201], scaleDef),
          }),
          ...scaleGvk,
        },
        patch: {
          ...op('patch', `patch${pre}${scoped}${r.kind}Scale`, `partially update scale of the specified ${r.kind}`, {
            parameters: [...WRITE_PARAMS, P.force],
            requestBody: patchBody,
            responses: responses([200, 201], scaleDef),
          }),
          ...scaleGvk,
        },
        parameters: pathParams(true),
      };
      continue;
    }
    if (sub.type !== 'partialUpdate') continue;
    const title = sub.name.charAt(0).toUpperCase() + sub.name.slice(1);
    paths[`${item}/${sub.name}`] = {
      put: op('put', `replace${pre}${scoped}${r.kind}${title}`, `replace ${sub.name} of the specified ${r.kind}`, {
        parameters: WRITE_PARAMS,
        requestBody: writeBody,
        responses: responses([200, 201], kindDef),
      }),
      parameters: pathParams(true),
    };
  }
  return paths;
}

/** The one operation of a create-only kind (a review): POST to the collection. */
export function buildCreateOnlyPaths(r: OpenApiResource, kindDef: string): Record<string, unknown> {
  const base = r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  const gvk = { group: r.group, version: r.version, kind: r.kind };
  return {
    [`${base}/${r.plural}`]: {
      post: {
        tags: [tag(r.group, r.version)],
        description: `create a ${r.kind}`,
        operationId: `create${gvPrefix(r.group, r.version)}${r.kind}`,
        parameters: WRITE_PARAMS,
        requestBody: { required: true, content: content(kindDef, ['*/*']) },
        responses: responses([200, 201, 202], kindDef),
        'x-kubernetes-action': 'post',
        'x-kubernetes-group-version-kind': gvk,
      },
      parameters: [P.pretty],
    },
  };
}
