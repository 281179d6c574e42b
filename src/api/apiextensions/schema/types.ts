/** apiextensions.k8s.io/v1 JSONSchemaProps: the OpenAPI v3 schema a CRD version declares. */
export interface JSONSchemaProps {
  type?: string;
  format?: string;
  title?: string;
  description?: string;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps | boolean;
  items?: JSONSchemaProps | JSONSchemaProps[];
  required?: string[];
  enum?: unknown[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minProperties?: number;
  maxProperties?: number;
  nullable?: boolean;
  default?: unknown;
  allOf?: JSONSchemaProps[];
  anyOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  $ref?: string;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  'x-kubernetes-validations'?: unknown[];
  [extra: string]: unknown;
}

/** A JSON value as decoded from a request body. */
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The schema of `items` (a single schema; the array form is refused by structural validation). */
export function itemsOf(s: JSONSchemaProps): JSONSchemaProps | undefined {
  return Array.isArray(s.items) ? undefined : s.items;
}

/** The schema of an additional property, or undefined when none are declared. */
export function additionalOf(s: JSONSchemaProps): JSONSchemaProps | undefined {
  return isPlainObject(s.additionalProperties) ? (s.additionalProperties as JSONSchemaProps) : undefined;
}
