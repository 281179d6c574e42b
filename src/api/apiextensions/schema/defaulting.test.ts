import { describe, expect, it } from 'vitest';
import { applyDefaults } from './defaulting.js';
import type { JSONSchemaProps } from './types.js';

describe('defaulting', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        default: {},
        properties: {
          replicas: { type: 'integer', default: 1 },
          mode: { type: 'string', default: 'fast' },
          opt: { type: 'string', nullable: true, default: 'x' },
          ports: {
            type: 'array',
            items: { type: 'object', properties: { protocol: { type: 'string', default: 'TCP' } } },
          },
          labels: {
            type: 'object',
            additionalProperties: { type: 'object', properties: { v: { type: 'string', default: 'd' } } },
          },
        },
      },
    },
  };
  it('fills missing fields, defaults inside defaults, items and map values; null is replaced unless nullable', () => {
    const o: Record<string, unknown> = {};
    applyDefaults(o, s);
    expect(o).toEqual({ spec: { replicas: 1, mode: 'fast', opt: 'x' } });
    const p: Record<string, unknown> = { spec: { replicas: 3, mode: null, opt: null, ports: [{}], labels: { a: {} } } };
    applyDefaults(p, s);
    expect(p).toEqual({
      spec: { replicas: 3, mode: 'fast', opt: null, ports: [{ protocol: 'TCP' }], labels: { a: { v: 'd' } } },
    });
  });
});
