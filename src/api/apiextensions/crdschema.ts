/**
 * The OpenAPI definitions of apiextensions.k8s.io/v1 CustomResourceDefinition (kube's names),
 * published beside the generated ones: they type the CRD for strict field validation, server-side
 * apply, /openapi/v2, /openapi/v3 and `kubectl explain crd`. JSONSchemaProps is recursive and
 * free-form, so a version's schema is kept whole (x-kubernetes-preserve-unknown-fields).
 */
import type { Schema } from '../resources/types.js';

const PKG = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1';
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
export const CRD_DEFINITION = `${PKG}.CustomResourceDefinition`;
const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const str = (description: string): Schema => ({ type: 'string', description });
const bool = (description: string): Schema => ({ type: 'boolean', description });
const strings = (description: string): Schema => ({
  type: 'array',
  items: { type: 'string' },
  description,
  'x-kubernetes-list-type': 'atomic',
});
const gvk = { group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition' };

const names: Schema = {
  type: 'object',
  description: 'CustomResourceDefinitionNames indicates the names to serve this CustomResourceDefinition',
  required: ['plural', 'kind'],
  properties: {
    categories: strings("categories is a list of grouped resources this custom resource belongs to (e.g. 'all')."),
    kind: str('kind is the serialized kind of the resource. It is normally CamelCase and singular.'),
    listKind: str('listKind is the serialized kind of the list for this resource. Defaults to "`kind`List".'),
    plural: str('plural is the plural name of the resource to serve. Must be all lowercase.'),
    shortNames: strings('shortNames are short names for the resource, exposed in API discovery documents.'),
    singular: str(
      'singular is the singular name of the resource. It must be all lowercase. Defaults to lowercased `kind`.',
    ),
  },
};

const version: Schema = {
  type: 'object',
  description: 'CustomResourceDefinitionVersion describes a version for CRD.',
  required: ['name', 'served', 'storage'],
  properties: {
    additionalPrinterColumns: {
      type: 'array',
      description: 'additionalPrinterColumns specifies additional columns returned in Table output.',
      'x-kubernetes-list-type': 'atomic',
      items: {
        type: 'object',
        required: ['name', 'type', 'jsonPath'],
        properties: {
          description: str('description is a human readable description of this column.'),
          format: str('format is an optional OpenAPI type definition for this column.'),
          jsonPath: str(
            'jsonPath is a simple JSON path evaluated against each custom resource to produce the value for this column.',
          ),
          name: str('name is a human readable name for the column.'),
          priority: {
            type: 'integer',
            format: 'int32',
            description: 'priority is an integer defining the relative importance of this column compared to others.',
          },
          type: str('type is an OpenAPI type definition for this column.'),
        },
      },
    },
    deprecated: bool('deprecated indicates this version of the custom resource API is deprecated.'),
    deprecationWarning: str('deprecationWarning overrides the default warning returned to API clients.'),
    name: str('name is the version name, e.g. “v1”, “v2beta1”, etc.'),
    schema: {
      type: 'object',
      description:
        'schema describes the schema used for validation, pruning, and defaulting of this version of the custom resource.',
      properties: {
        openAPIV3Schema: {
          type: 'object',
          description: 'openAPIV3Schema is the OpenAPI v3 schema to use for validation and pruning.',
          'x-kubernetes-preserve-unknown-fields': true,
        },
      },
    },
    selectableFields: {
      type: 'array',
      description: 'selectableFields specifies paths to fields that may be used as field selectors.',
      'x-kubernetes-list-type': 'atomic',
      items: {
        type: 'object',
        required: ['jsonPath'],
        properties: { jsonPath: str('jsonPath is a simple JSON path.') },
      },
    },
    served: bool('served is a flag enabling/disabling this version from being served via REST APIs'),
    storage: bool('storage indicates this version should be used when persisting custom resources to storage.'),
    subresources: {
      type: 'object',
      description: 'subresources specify what subresources this version of the defined custom resource have.',
      properties: {
        scale: {
          type: 'object',
          description:
            'scale indicates the custom resource should serve a `/scale` subresource that returns an `autoscaling/v1` Scale object.',
          required: ['specReplicasPath', 'statusReplicasPath'],
          properties: {
            labelSelectorPath: str(
              'labelSelectorPath defines the JSON path inside of a custom resource that corresponds to Scale `status.selector`.',
            ),
            specReplicasPath: str(
              'specReplicasPath defines the JSON path inside of a custom resource that corresponds to Scale `spec.replicas`.',
            ),
            statusReplicasPath: str(
              'statusReplicasPath defines the JSON path inside of a custom resource that corresponds to Scale `status.replicas`.',
            ),
          },
        },
        status: {
          type: 'object',
          description: 'status indicates the custom resource should serve a `/status` subresource.',
          'x-kubernetes-preserve-unknown-fields': true,
        },
      },
    },
  },
};

const condition: Schema = {
  type: 'object',
  description: 'CustomResourceDefinitionCondition contains details for the current condition of this pod.',
  required: ['type', 'status'],
  properties: {
    lastTransitionTime: {
      type: 'string',
      format: 'date-time',
      description: 'lastTransitionTime last time the condition transitioned from one status to another.',
    },
    message: str('message is a human-readable message indicating details about last transition.'),
    reason: str("reason is a unique, one-word, CamelCase reason for the condition's last transition."),
    status: str('status is the status of the condition. Can be True, False, Unknown.'),
    type: str('type is the type of the condition. Types include Established, NamesAccepted and Terminating.'),
  },
};

const crd: Schema = {
  type: 'object',
  description:
    'CustomResourceDefinition represents a resource that should be exposed on the API server.  Its name MUST be in the format <.spec.name>.<.spec.group>.',
  required: ['spec'],
  properties: {
    apiVersion: str('APIVersion defines the versioned schema of this representation of an object.'),
    kind: str('Kind is a string value representing the REST resource this object represents.'),
    metadata: { allOf: [ref(`${META}.ObjectMeta`)], default: {}, description: "Standard object's metadata." },
    spec: {
      type: 'object',
      description: 'spec describes how the user wants the resources to appear',
      required: ['group', 'names', 'scope', 'versions'],
      properties: {
        conversion: {
          type: 'object',
          description: 'conversion defines conversion settings for the CRD.',
          required: ['strategy'],
          properties: {
            strategy: str(
              'strategy specifies how custom resources are converted between versions. Allowed values are: - `"None"`: The converter only change the apiVersion and would not touch any other field in the custom resource. - `"Webhook"`: API Server will call to an external webhook to do the conversion.',
            ),
            webhook: {
              type: 'object',
              description: 'webhook describes how to call the conversion webhook.',
              'x-kubernetes-preserve-unknown-fields': true,
            },
          },
        },
        group: str('group is the API group of the defined custom resource.'),
        names,
        preserveUnknownFields: bool(
          'preserveUnknownFields indicates that object fields which are not specified in the OpenAPI schema should be preserved when persisting to storage.',
        ),
        scope: str(
          'scope indicates whether the defined custom resource is cluster- or namespace-scoped. Allowed values are `Cluster` and `Namespaced`.',
        ),
        versions: {
          type: 'array',
          description: 'versions is the list of all API versions of the defined custom resource.',
          items: version,
          'x-kubernetes-list-type': 'atomic',
        },
      },
    },
    status: {
      type: 'object',
      description: 'status indicates the actual state of the CustomResourceDefinition',
      properties: {
        acceptedNames: names,
        conditions: {
          type: 'array',
          description: 'conditions indicate state for particular aspects of a CustomResourceDefinition',
          items: condition,
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['type'],
        },
        storedVersions: strings('storedVersions lists all versions of CustomResources that were ever persisted.'),
      },
    },
  },
  'x-kubernetes-group-version-kind': [gvk],
};

/** The CRD kind and its List. */
export const CRD_DEFINITIONS: Record<string, Schema> = {
  [CRD_DEFINITION]: crd,
  [`${PKG}.CustomResourceDefinitionList`]: {
    type: 'object',
    description: 'CustomResourceDefinitionList is a list of CustomResourceDefinition objects.',
    required: ['items'],
    properties: {
      apiVersion: str('APIVersion defines the versioned schema of this representation of an object.'),
      items: {
        type: 'array',
        description: 'items list individual CustomResourceDefinition objects',
        items: ref(CRD_DEFINITION),
      },
      kind: str('Kind is a string value representing the REST resource this object represents.'),
      metadata: { allOf: [ref(`${META}.ListMeta`)], default: {}, description: "Standard object's metadata" },
    },
    'x-kubernetes-group-version-kind': [{ ...gvk, kind: 'CustomResourceDefinitionList' }],
  },
};
