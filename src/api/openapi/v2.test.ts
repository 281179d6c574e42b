import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { ALL_RESOURCES } from '../resources/index.js';
import { ProtoMessage } from './protowire.js';
import { buildOpenApiV2, toV2Schema } from './v2.js';

describe('protobuf wire pieces', () => {
  it('encodes strings, bools, nested messages and multi-byte lengths as protobuf does', () => {
    expect([...new ProtoMessage().string(1, '2.0').encode()]).toEqual([0x0a, 3, 0x32, 0x2e, 0x30]);
    expect([...new ProtoMessage().string(1, '').bool(2, false).encode()]).toEqual([]);
    expect([...new ProtoMessage().bool(27, true).encode()]).toEqual([0xd8, 0x01, 1]);
    expect([...new ProtoMessage().message(8, new ProtoMessage()).encode()]).toEqual([0x42, 0]);
    const long = new ProtoMessage().string(4, 'x'.repeat(300)).encode();
    expect([...long.subarray(0, 3)]).toEqual([0x22, 0xac, 0x02]);
    expect(long.length).toBe(303);
  });
});

describe('/openapi/v2 document', () => {
  const doc = buildOpenApiV2(ALL_RESOURCES);
  const json = JSON.parse(doc.json) as { swagger: string; definitions: Record<string, Record<string, unknown>> };

  it('has every served kind with its group-version-kind, and every reference resolves', () => {
    expect(json.swagger).toBe('2.0');
    const pv = json.definitions['io.k8s.api.core.v1.PersistentVolume']!;
    expect(pv['x-kubernetes-group-version-kind']).toEqual([{ group: '', kind: 'PersistentVolume', version: 'v1' }]);
    expect(json.definitions['io.k8s.api.storage.v1.StorageClass']).toBeDefined();
    const refs: string[] = [];
    JSON.stringify(json.definitions, (k, v: unknown) => {
      if (k === '$ref') refs.push(v as string);
      return v;
    });
    expect(refs.length).toBeGreaterThan(100);
    for (const r of refs) {
      expect(r).toMatch(/^#\/definitions\//);
      expect(json.definitions[r.slice('#/definitions/'.length)], r).toBeDefined();
    }
  });

  it('turns a described v3 reference into a v2 reference and drops what Swagger 2.0 lacks', () => {
    expect(toV2Schema({ description: 'd', allOf: [{ $ref: '#/components/schemas/X' }], nullable: true })).toEqual({
      description: 'd',
      $ref: '#/definitions/X',
    });
    expect(
      toV2Schema({ type: 'array', items: { $ref: '#/components/schemas/Y' }, 'x-kubernetes-list-type': 'atomic' }),
    ).toEqual({
      type: 'array',
      items: { $ref: '#/definitions/Y' },
      'x-kubernetes-list-type': 'atomic',
    });
  });

  it('encodes as gnostic openapi_v2.Document: definitions, properties, types, refs and patch extensions decode back', () => {
    // A reader for the handful of Document fields kubectl's models use (numbers as in gnostic's OpenAPIv2).
    const root = protobuf.Root.fromJSON({
      nested: {
        Any: { fields: { yaml: { type: 'string', id: 2 } } },
        NamedAny: { fields: { name: { type: 'string', id: 1 }, value: { type: 'Any', id: 2 } } },
        TypeItem: { fields: { value: { rule: 'repeated', type: 'string', id: 1 } } },
        ItemsItem: { fields: { schema: { rule: 'repeated', type: 'Schema', id: 1 } } },
        Properties: { fields: { additionalProperties: { rule: 'repeated', type: 'NamedSchema', id: 1 } } },
        Schema: {
          fields: {
            ref: { type: 'string', id: 1 },
            description: { type: 'string', id: 4 },
            required: { rule: 'repeated', type: 'string', id: 19 },
            type: { type: 'TypeItem', id: 22 },
            items: { type: 'ItemsItem', id: 23 },
            properties: { type: 'Properties', id: 25 },
            vendorExtension: { rule: 'repeated', type: 'NamedAny', id: 31 },
          },
        },
        NamedSchema: { fields: { name: { type: 'string', id: 1 }, value: { type: 'Schema', id: 2 } } },
        Definitions: { fields: { additionalProperties: { rule: 'repeated', type: 'NamedSchema', id: 1 } } },
        Info: { fields: { title: { type: 'string', id: 1 }, version: { type: 'string', id: 2 } } },
        Document: {
          fields: {
            swagger: { type: 'string', id: 1 },
            info: { type: 'Info', id: 2 },
            definitions: { type: 'Definitions', id: 9 },
          },
        },
      },
    });
    type Named<T> = { name: string; value: T };
    type S = {
      ref?: string;
      type?: { value: string[] };
      properties?: { additionalProperties: Array<Named<S>> };
      items?: { schema: S[] };
      vendorExtension?: Array<Named<{ yaml: string }>>;
    };
    const d = root.lookupType('Document').toObject(root.lookupType('Document').decode(doc.protobuf)) as {
      swagger: string;
      info: { title: string; version: string };
      definitions: { additionalProperties: Array<Named<S>> };
    };
    expect(d.swagger).toBe('2.0');
    expect(d.info.title).toBe('Kubernetes');
    const byName = new Map(d.definitions.additionalProperties.map((n) => [n.name, n.value]));
    expect([...byName.keys()].sort()).toEqual(Object.keys(json.definitions).sort());
    const pv = byName.get('io.k8s.api.core.v1.PersistentVolume')!;
    expect(
      JSON.parse(pv.vendorExtension!.find((e) => e.name === 'x-kubernetes-group-version-kind')!.value.yaml),
    ).toEqual([{ group: '', kind: 'PersistentVolume', version: 'v1' }]);
    const pvProps = new Map(pv.properties!.additionalProperties.map((n) => [n.name, n.value]));
    expect(pvProps.get('spec')!.ref).toBe('#/definitions/io.k8s.api.core.v1.PersistentVolumeSpec');
    const containers = byName
      .get('io.k8s.api.core.v1.PodSpec')!
      .properties!.additionalProperties.find((n) => n.name === 'containers')!.value;
    expect(containers.type!.value).toEqual(['array']);
    expect(containers.items!.schema[0]!.ref).toBe('#/definitions/io.k8s.api.core.v1.Container');
    const ext = Object.fromEntries(
      containers.vendorExtension!.map((e) => [e.name, JSON.parse(e.value.yaml) as unknown]),
    );
    expect(ext).toMatchObject({ 'x-kubernetes-patch-merge-key': 'name', 'x-kubernetes-patch-strategy': 'merge' });
  });
});
