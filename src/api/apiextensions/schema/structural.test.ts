import { describe, expect, it } from 'vitest';
import { causeText } from '../../resources/fielderrors.js';
import { validateStructuralSchema } from './structural.js';
import type { JSONSchemaProps } from './types.js';

const P = 'spec.versions[0].schema.openAPIV3Schema';
const errs = (s: JSONSchemaProps): string[] => validateStructuralSchema(s, P).map(causeText);

describe('structural schema rules', () => {
  it.each([
    {
      name: 'root type',
      s: { type: 'string' },
      want: `${P}.type: Invalid value: "string": must be object at the root`,
    },
    {
      name: 'missing type',
      s: { type: 'object', properties: { a: {} } },
      want: `${P}.properties[a].type: Required value: must not be empty for specified object fields`,
    },
    {
      name: 'array without items',
      s: { type: 'object', properties: { a: { type: 'array' } } },
      want: `${P}.properties[a].items: Required value: must be specified`,
    },
    {
      name: 'int-or-string with type',
      s: { type: 'object', properties: { a: { type: 'string', 'x-kubernetes-int-or-string': true } } },
      want: `${P}.properties[a].type: Invalid value: "string": must be empty if x-kubernetes-int-or-string is true`,
    },
    {
      name: 'list-map without keys',
      s: {
        type: 'object',
        properties: { a: { type: 'array', 'x-kubernetes-list-type': 'map', items: { type: 'object' } } },
      },
      want: `${P}.properties[a].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`,
    },
    {
      name: 'properties and additionalProperties',
      s: {
        type: 'object',
        properties: {
          a: { type: 'object', properties: { b: { type: 'string' } }, additionalProperties: { type: 'string' } },
        },
      },
      want: `${P}.properties[a].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`,
    },
    {
      name: 'default in value validation',
      s: { type: 'object', properties: { a: { type: 'string', anyOf: [{ default: 'x' }] } } },
      want: `${P}.properties[a].anyOf[0].default: Forbidden: must be undefined to be structural`,
    },
    {
      name: '$ref',
      s: { type: 'object', properties: { a: { $ref: '#/x' } } },
      want: `${P}.properties[a].$ref: Forbidden: $ref is not supported`,
    },
    {
      name: 'CEL refused',
      s: { type: 'object', 'x-kubernetes-validations': [{ rule: 'self.a > 0' }] },
      want: `${P}.x-kubernetes-validations: Forbidden: CEL validation rules are not supported by this server (Stowage has no CEL evaluator): remove x-kubernetes-validations`,
    },
    {
      name: 'default must validate',
      s: { type: 'object', properties: { a: { type: 'integer', default: 'x' } } },
      want: `${P}.properties[a].default: Invalid value: "string": ${P}.properties[a].default in body must be of type integer: "string"`,
    },
    {
      name: 'metadata beyond name',
      s: { type: 'object', properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } } },
      want: `${P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`,
    },
  ] as Array<{ name: string; s: JSONSchemaProps; want: string }>)('$name', ({ s, want }) => {
    expect(errs(s)).toContain(want);
  });

  it('accepts a structural schema with int-or-string, preserve-unknown-fields, list maps and anyOf', () => {
    expect(
      errs({
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            properties: {
              port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
              raw: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              items: {
                type: 'array',
                'x-kubernetes-list-type': 'map',
                'x-kubernetes-list-map-keys': ['name'],
                items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
              },
            },
          },
        },
      }),
    ).toEqual([]);
  });
});
