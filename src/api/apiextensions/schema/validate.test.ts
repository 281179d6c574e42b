import { describe, expect, it } from 'vitest';
import { causeText } from '../../resources/fielderrors.js';
import type { JSONSchemaProps } from './types.js';
import { validateCustomResource } from './validate.js';

const root = (spec: JSONSchemaProps): JSONSchemaProps => ({ type: 'object', properties: { spec } });
const texts = (spec: JSONSchemaProps, value: unknown): string[] =>
  validateCustomResource({ spec: value }, root(spec)).map(causeText);

describe('custom resource validation (kube paths and messages)', () => {
  it.each([
    {
      name: 'type',
      s: { type: 'integer' },
      v: 'x',
      want: 'spec: Invalid value: "string": spec in body must be of type integer: "string"',
    },
    {
      name: 'integer vs number',
      s: { type: 'integer' },
      v: 1.5,
      want: 'spec: Invalid value: "number": spec in body must be of type integer: "number"',
    },
    {
      name: 'null not nullable',
      s: { type: 'object' },
      v: null,
      want: 'spec: Invalid value: "null": spec in body must be of type object: "null"',
    },
    {
      name: 'enum',
      s: { type: 'string', enum: ['a', 'b'] },
      v: 'c',
      want: 'spec: Unsupported value: "c": supported values: "a", "b"',
    },
    {
      name: 'pattern',
      s: { type: 'string', pattern: '^a+$' },
      v: 'b',
      want: `spec: Invalid value: "b": spec in body should match '^a+$'`,
    },
    {
      name: 'maxLength',
      s: { type: 'string', maxLength: 2 },
      v: 'abc',
      want: 'spec: Too long: may not be longer than 2',
    },
    {
      name: 'minLength',
      s: { type: 'string', minLength: 2 },
      v: 'a',
      want: 'spec: Invalid value: "a": spec in body should be at least 2 chars long',
    },
    {
      name: 'maximum',
      s: { type: 'integer', maximum: 3 },
      v: 4,
      want: 'spec: Invalid value: 4: spec in body should be less than or equal to 3',
    },
    {
      name: 'exclusiveMaximum',
      s: { type: 'integer', maximum: 3, exclusiveMaximum: true },
      v: 3,
      want: 'spec: Invalid value: 3: spec in body should be less than 3',
    },
    {
      name: 'minimum',
      s: { type: 'integer', minimum: 1 },
      v: 0,
      want: 'spec: Invalid value: 0: spec in body should be greater than or equal to 1',
    },
    {
      name: 'multipleOf',
      s: { type: 'integer', multipleOf: 2 },
      v: 3,
      want: 'spec: Invalid value: 3: spec in body should be a multiple of 2',
    },
    {
      name: 'maxItems',
      s: { type: 'array', items: { type: 'string' }, maxItems: 1 },
      v: ['a', 'b'],
      want: 'spec: Too many: 2: must have at most 1 items',
    },
    {
      name: 'minItems',
      s: { type: 'array', items: { type: 'string' }, minItems: 2 },
      v: ['a'],
      want: 'spec: Invalid value: 1: spec in body should have at least 2 items',
    },
    {
      name: 'items',
      s: { type: 'array', items: { type: 'string' } },
      v: ['a', 1],
      want: 'spec[1]: Invalid value: "integer": spec[1] in body must be of type string: "integer"',
    },
    {
      name: 'required',
      s: { type: 'object', required: ['a'], properties: { a: { type: 'string' } } },
      v: {},
      want: 'spec.a: Required value',
    },
    {
      name: 'maxProperties',
      s: { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 1 },
      v: { a: 'x', b: 'y' },
      want: 'spec: Too many: 2: must have at most 1 items',
    },
    {
      name: 'additionalProperties',
      s: { type: 'object', additionalProperties: { type: 'string' } },
      v: { k: 1 },
      want: 'spec.k: Invalid value: "integer": spec.k in body must be of type string: "integer"',
    },
    {
      name: 'int-or-string',
      s: { 'x-kubernetes-int-or-string': true },
      v: true,
      want: 'spec: Invalid value: "boolean": spec in body must be of type integer,string: "boolean"',
    },
    {
      name: 'format date-time',
      s: { type: 'string', format: 'date-time' },
      v: 'yesterday',
      want: 'spec: Invalid value: "yesterday": spec in body must be of type date-time: "yesterday"',
    },
    {
      name: 'list-type set',
      s: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
      v: ['a', 'a'],
      want: 'spec[1]: Duplicate value: "a"',
    },
    {
      name: 'list-type map',
      s: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: { type: 'object', properties: { name: { type: 'string' } } },
      },
      v: [{ name: 'a' }, { name: 'a' }],
      want: 'spec[1]: Duplicate value: map[string]interface {}{"name":"a"}',
    },
    {
      name: 'oneOf',
      s: {
        type: 'object',
        oneOf: [{ required: ['a'] }, { required: ['b'] }],
        properties: { a: { type: 'string' }, b: { type: 'string' } },
      },
      v: { a: 'x', b: 'y' },
      want: 'spec: Invalid value: "object": spec in body must validate one and only one schema (oneOf)',
    },
    {
      name: 'embedded resource',
      s: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
      v: { metadata: {} },
      want: 'spec.kind: Required value: must not be empty',
    },
  ] as Array<{ name: string; s: JSONSchemaProps; v: unknown; want: string }>)('$name', ({ s, v, want }) => {
    expect(texts(s, v)).toContain(want);
  });

  it.each([
    { name: 'nullable null', s: { type: 'object', nullable: true }, v: null },
    { name: 'int-or-string int', s: { 'x-kubernetes-int-or-string': true }, v: 3 },
    { name: 'int-or-string string', s: { 'x-kubernetes-int-or-string': true }, v: '50%' },
    { name: 'number accepts integers', s: { type: 'number' }, v: 3 },
    {
      name: 'preserve-unknown-fields',
      s: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      v: { any: [1] },
    },
    {
      name: 'oneOf exactly one',
      s: { type: 'object', oneOf: [{ required: ['a'] }, { required: ['b'] }] },
      v: { a: 'x' },
    },
  ] as Array<{ name: string; s: JSONSchemaProps; v: unknown }>)('accepts $name', ({ s, v }) => {
    expect(texts(s, v)).toEqual([]);
  });
});
