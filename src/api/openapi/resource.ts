import type { ResourceDef } from '../resources/types.js';

/** The ResourceDef fields the OpenAPI documents and their paths are built from. */
export type OpenApiResource = Pick<
  ResourceDef,
  'group' | 'version' | 'kind' | 'plural' | 'namespaced' | 'hasStatus' | 'subresources'
> &
  Partial<Pick<ResourceDef, 'verbs'>>;
