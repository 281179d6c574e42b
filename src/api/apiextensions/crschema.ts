/**
 * A CRD version's schema as the server's own Schema: the root gains apiVersion, kind and a typed
 * ObjectMeta (as kube-apiserver publishes CR schemas), embedded resources gain the same, and the
 * kind gets its OpenAPI definition names for /openapi/v2, /openapi/v3 and `kubectl explain`.
 */
import type { Schema } from '../resources/types.js';
import { additionalOf, isPlainObject, itemsOf, type JSONSchemaProps } from './schema/types.js';

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

const API_VERSION: Schema = {
  type: 'string',
  description:
    'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
};
const KIND: Schema = {
  type: 'string',
  description:
    'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
};
const OBJECT_META: Schema = {
  allOf: [ref(`${META}.ObjectMeta`)],
  description:
    "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
};

/** kube's definition name of a CR kind: the group reversed, then version and kind (`io.k8s.storage.snapshot.v1.VolumeSnapshot`). */
export function crDefinitionName(group: string, version: string, kind: string): string {
  return `${group.split('.').reverse().join('.')}.${version}.${kind}`;
}

/** Converts one schema node (recursively) to the server's Schema shape. */
function convert(s: JSONSchemaProps): Schema {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'properties' && isPlainObject(v)) {
      out.properties = Object.fromEntries(
        Object.entries(v as Record<string, JSONSchemaProps>).map(([n, p]) => [n, convert(p)]),
      );
    } else if (k === 'items') {
      const items = itemsOf(s);
      if (items) out.items = convert(items);
    } else if (k === 'additionalProperties') {
      const add = additionalOf(s);
      out.additionalProperties = add ? convert(add) : v;
    } else if (k === 'allOf' || k === 'anyOf' || k === 'oneOf' || k === 'not' || k === 'x-kubernetes-validations') {
      // value validations only: they add no fields, and kube's published schemas keep them; ours stay simple
      continue;
    } else {
      out[k] = structuredClone(v);
    }
  }
  if (s['x-kubernetes-embedded-resource']) {
    const props = (out.properties ??= {}) as Record<string, Schema>;
    props.apiVersion ??= API_VERSION;
    props.kind ??= KIND;
    props.metadata = OBJECT_META;
    out.type = 'object';
  }
  return out as Schema;
}

/** The whole object's schema of a CR version. */
export function crObjectSchema(root: JSONSchemaProps, gvk: { group: string; version: string; kind: string }): Schema {
  const s = convert(root);
  s.type = 'object';
  s.properties = { ...(s.properties ?? {}), apiVersion: API_VERSION, kind: KIND, metadata: OBJECT_META };
  s['x-kubernetes-group-version-kind'] = [gvk];
  return s;
}

/** The kind's and its List's definitions, for setDynamicDefinitions. */
export function crDefinitions(
  schema: Schema,
  gvk: { group: string; version: string; kind: string },
  listKind: string,
): Record<string, Schema> {
  const name = crDefinitionName(gvk.group, gvk.version, gvk.kind);
  return {
    [name]: schema,
    [crDefinitionName(gvk.group, gvk.version, listKind)]: {
      type: 'object',
      description: `${listKind} is a list of ${gvk.kind}`,
      required: ['items'],
      properties: {
        apiVersion: API_VERSION,
        items: {
          type: 'array',
          description: `List of ${gvk.kind.toLowerCase()}s. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`,
          items: ref(name),
        },
        kind: KIND,
        metadata: {
          allOf: [ref(`${META}.ListMeta`)],
          description:
            'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
        },
      },
      'x-kubernetes-group-version-kind': [{ ...gvk, kind: listKind }],
    },
  };
}
