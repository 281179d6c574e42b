import { describe, expect, it } from 'vitest';
import { HttpError } from '../status.js';
import { decodeTyped, type TypedTarget } from './index.js';
import { goTimeParseError } from './gotime.js';
import { base64ErrorAt } from './base64.js';

const PV: TypedTarget = { group: '', version: 'v1', kind: 'PersistentVolume' };
const PVC: TypedTarget = { group: '', version: 'v1', kind: 'PersistentVolumeClaim' };
const POD: TypedTarget = { group: '', version: 'v1', kind: 'Pod' };
const SC: TypedTarget = { group: 'storage.k8s.io', version: 'v1', kind: 'StorageClass' };
const SECRET: TypedTarget = { group: '', version: 'v1', kind: 'Secret' };
const LEASE: TypedTarget = { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease' };
const BINDING: TypedTarget = { group: '', version: 'v1', kind: 'Binding' };

function bodyError(t: TypedTarget, v: unknown): string {
  try {
    decodeTyped(t, v, 'body');
  } catch (e) {
    if (e instanceof HttpError && e.httpStatus === 400)
      return e.message.replace(`${t.kind} in version "${t.version}" cannot be handled as a ${t.kind}: `, '');
    throw e;
  }
  return '';
}

const pvHead = (spec: unknown, metadata: unknown = { name: 'a' }) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata,
  spec,
});

describe('decodeTyped: Go encoding/json errors, as kube-apiserver answers them', () => {
  it.each([
    {
      name: 'labels as a list',
      t: PV,
      v: pvHead({}, { name: 'a', labels: ['a'] }),
      want: 'json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string',
    },
    {
      name: 'annotation value a number',
      t: PV,
      v: pvHead({}, { annotations: { a: 1 } }),
      want: 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.annotations of type string',
    },
    {
      name: 'accessModes a string',
      t: PV,
      v: pvHead({ accessModes: 'RWO' }),
      want: 'json: cannot unmarshal string into Go struct field PersistentVolumeSpec.spec.accessModes of type []v1.PersistentVolumeAccessMode',
    },
    {
      name: 'accessModes item a number',
      t: PV,
      v: pvHead({ accessModes: [1] }),
      want: 'json: cannot unmarshal number into Go struct field PersistentVolumeSpec.spec.accessModes of type v1.PersistentVolumeAccessMode',
    },
    {
      name: 'claimRef a string',
      t: PV,
      v: pvHead({ claimRef: 'x' }),
      want: 'json: cannot unmarshal string into Go struct field PersistentVolumeSpec.spec.claimRef of type v1.ObjectReference',
    },
    {
      name: 'mountOptions numbers',
      t: PV,
      v: pvHead({ mountOptions: [1, 2] }),
      want: 'json: cannot unmarshal number into Go struct field PersistentVolumeSpec.spec.mountOptions of type string',
    },
    {
      name: 'generation a string',
      t: PV,
      v: pvHead({}, { generation: 'x' }),
      want: 'json: cannot unmarshal string into Go struct field ObjectMeta.metadata.generation of type int64',
    },
    {
      name: 'metadata a list',
      t: PV,
      v: pvHead({}, []),
      want: 'json: cannot unmarshal array into Go struct field PersistentVolume.metadata of type v1.ObjectMeta',
    },
    {
      name: 'nested struct field',
      t: PV,
      v: pvHead({ csi: { driver: 'd', volumeHandle: 'h', readOnly: 'yes' } }),
      want: 'json: cannot unmarshal string into Go struct field CSIPersistentVolumeSource.spec.csi.readOnly of type bool',
    },
    {
      name: 'selector.matchLabels a list',
      t: PVC,
      v: { metadata: {}, spec: { selector: { matchLabels: ['a'] } } },
      want: 'json: cannot unmarshal array into Go struct field LabelSelector.spec.selector.matchLabels of type map[string]string',
    },
    {
      name: 'volumeMounts an object',
      t: POD,
      v: { metadata: {}, spec: { containers: [{ name: 'c', volumeMounts: { a: 1 } }] } },
      want: 'json: cannot unmarshal object into Go struct field Container.spec.containers.volumeMounts of type []v1.VolumeMount',
    },
    {
      name: 'int32 given a fraction',
      t: POD,
      v: { metadata: {}, spec: { containers: [{ name: 'c', ports: [{ containerPort: 1.5 }] }] } },
      want: 'json: cannot unmarshal number 1.5 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32',
    },
    {
      name: 'int32 out of range',
      t: POD,
      v: { metadata: {}, spec: { containers: [{ name: 'c', ports: [{ containerPort: 3000000000 }] }] } },
      want: 'json: cannot unmarshal number 3000000000 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32',
    },
    {
      name: 'int-or-string given a bool',
      t: POD,
      v: { metadata: {}, spec: { containers: [{ name: 'c', livenessProbe: { httpGet: { port: true } } }] } },
      want: 'json: cannot unmarshal bool into Go struct field HTTPGetAction.spec.containers.livenessProbe.httpGet.port of type int32',
    },
    {
      name: 'allowVolumeExpansion a string',
      t: SC,
      v: { metadata: {}, provisioner: 'p', allowVolumeExpansion: 'yes' },
      want: 'json: cannot unmarshal string into Go struct field StorageClass.allowVolumeExpansion of type bool',
    },
    {
      name: 'parameters value an object',
      t: SC,
      v: { metadata: {}, provisioner: 'p', parameters: { a: { b: 1 } } },
      want: 'json: cannot unmarshal object into Go struct field StorageClass.parameters of type string',
    },
    {
      name: 'quantity not a quantity',
      t: PV,
      v: pvHead({ capacity: { storage: 'lots' } }),
      want: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    },
    {
      name: 'quantity a bool',
      t: PV,
      v: pvHead({ capacity: { storage: true } }),
      want: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    },
    {
      name: 'capacity a list',
      t: PV,
      v: pvHead({ capacity: [] }),
      want: 'json: cannot unmarshal array into Go struct field PersistentVolumeSpec.spec.capacity of type v1.ResourceList',
    },
    {
      name: 'secret data not base64',
      t: SECRET,
      v: { metadata: {}, data: { a: 'ab$c' } },
      want: 'illegal base64 data at input byte 2',
    },
    {
      name: 'time not RFC 3339',
      t: PV,
      v: pvHead({}, { creationTimestamp: 'yesterday' }),
      want: 'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"',
    },
    {
      name: 'time a number',
      t: PV,
      v: pvHead({}, { creationTimestamp: 5 }),
      want: 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string',
    },
    {
      name: 'micro time without micros',
      t: LEASE,
      v: { metadata: {}, spec: { renewTime: '2024-01-01T00:00:00Z' } },
      want: 'parsing time "2024-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"',
    },
    {
      name: 'binding target a string',
      t: BINDING,
      v: { metadata: { name: 'p' }, target: 'n' },
      want: 'json: cannot unmarshal string into Go struct field Binding.target of type v1.ObjectReference',
    },
  ])('$name', ({ t, v, want }) => {
    expect(bodyError(t, v)).toBe(want);
  });

  it('reports the first saved error, but an UnmarshalJSON error stops decoding and wins', () => {
    expect(bodyError(PV, pvHead({ accessModes: 'x', mountOptions: 'y' }, { labels: [] }))).toContain(
      'ObjectMeta.metadata.labels',
    );
    expect(bodyError(PV, pvHead({ capacity: { storage: 'x' } }, { labels: [] }))).toContain('quantities must match');
  });

  it('accepts well-typed objects and normalises them like a Go round trip', () => {
    const pv = pvHead(
      {
        capacity: { storage: 5 },
        accessModes: ['ReadWriteOnce', null],
        claimRef: null,
        csi: { driver: 'd', volumeHandle: 'h', fsType: null },
      },
      { name: 'a', labels: null, annotations: { a: null } },
    );
    expect(bodyError(PV, pv)).toBe('');
    expect(pv).toEqual(
      pvHead(
        { capacity: { storage: '5' }, accessModes: ['ReadWriteOnce', ''], csi: { driver: 'd', volumeHandle: 'h' } },
        { name: 'a', annotations: { a: '' } },
      ),
    );
    const fraction = pvHead({ capacity: { storage: 1.5 } });
    expect(bodyError(PV, fraction)).toBe('');
    expect(fraction.spec).toEqual({ capacity: { storage: '1500m' } });
  });

  it('leaves unknown fields and free-form fields alone', () => {
    expect(
      bodyError(
        PV,
        pvHead({ bogus: [1], capacity: { storage: '1Gi' } }, { managedFields: [{ fieldsV1: { 'f:x': {} } }] }),
      ),
    ).toBe('');
  });

  it('answers a wrong-typed patch result with 422 and one cause on `patch`', () => {
    const obj = pvHead({}, { name: 'a', annotations: { a: 1 } });
    let err: unknown;
    try {
      decodeTyped(PV, obj, 'patch');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(HttpError);
    const h = err as HttpError;
    expect(h.httpStatus).toBe(422);
    expect(h.reason).toBe('Invalid');
    const why = 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.annotations of type string';
    expect(h.details?.causes).toEqual([
      {
        type: 'FieldValueInvalid',
        field: 'patch',
        message: `Invalid value: ${JSON.stringify(JSON.stringify(obj))}: ${why}`,
      },
    ]);
    expect(h.message).toBe(` "" is invalid: patch: Invalid value: ${JSON.stringify(JSON.stringify(obj))}: ${why}`);
  });
});

describe('goTimeParseError', () => {
  it.each([
    ['2024-02-29T10:00:00Z', false, undefined],
    ['2024-02-29T10:00:00.123+02:00', false, undefined],
    ['2023-02-29T10:00:00Z', false, 'parsing time "2023-02-29T10:00:00Z": day out of range'],
    ['2024-13-01T10:00:00Z', false, 'parsing time "2024-13-01T10:00:00Z": month out of range'],
    [
      '2024-01-01 10:00:00Z',
      false,
      'parsing time "2024-01-01 10:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 10:00:00Z" as "T"',
    ],
    ['2024-01-01T10:00:00Zjunk', false, 'parsing time "2024-01-01T10:00:00Zjunk": extra text: "junk"'],
    ['2024-01-01T10:00:00.123456Z', true, undefined],
  ])('%s (micro %s)', (value, micro, want) => {
    expect(goTimeParseError(value, micro)).toBe(want);
  });
});

describe('base64ErrorAt (Go base64.StdEncoding)', () => {
  it.each([
    ['', -1],
    ['YQ==', -1],
    ['YWI=', -1],
    ['YWJj', -1],
    ['YWJj\nZGVm', -1],
    ['YQ', 0],
    ['YWJjZ', 4],
    ['Y===', 1],
    ['YQ=a', 2],
    ['YQ=', 3],
    ['YWI=x', 4],
    ['YQ==YQ==', 4],
    ['ab$c', 2],
    ['YWJj-A==', 4],
  ])('%j → %d', (s, at) => expect(base64ErrorAt(s)).toBe(at));
});
