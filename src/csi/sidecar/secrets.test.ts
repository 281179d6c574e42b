import { describe, expect, it } from 'vitest';
import { InvalidError } from '../../util/errors.js';
import { driverParameters, resolveSecretRef, secretData, type SecretKind } from './secrets.js';

const ctx = { pvName: 'pvc-1', pvcName: 'data', pvcNamespace: 'team', pvcAnnotations: { owner: 'alice' } };
const P = 'csi.storage.k8s.io/';

describe('resolveSecretRef', () => {
  it.each<{ name: string; kind: SecretKind; params: Record<string, string>; want: unknown }>([
    { name: 'none given', kind: 'provisioner', params: {}, want: undefined },
    {
      name: 'literal',
      kind: 'provisioner',
      params: { [`${P}provisioner-secret-name`]: 's', [`${P}provisioner-secret-namespace`]: 'kube-system' },
      want: { name: 's', namespace: 'kube-system' },
    },
    {
      name: 'pvc templates',
      kind: 'nodePublish',
      params: {
        [`${P}node-publish-secret-name`]: '${pvc.name}-${pv.name}',
        [`${P}node-publish-secret-namespace`]: '${pvc.namespace}',
      },
      want: { name: 'data-pvc-1', namespace: 'team' },
    },
    {
      name: 'annotation template on a non-provisioner secret',
      kind: 'controllerPublish',
      params: {
        [`${P}controller-publish-secret-name`]: "${pvc.annotations['owner']}",
        [`${P}controller-publish-secret-namespace`]: 'ns',
      },
      want: { name: 'alice', namespace: 'ns' },
    },
  ])('$name', ({ kind, params, want }) => expect(resolveSecretRef(kind, params, ctx)).toEqual(want));

  it.each<{ name: string; kind: SecretKind; params: Record<string, string>; msg: RegExp }>([
    {
      name: 'name without namespace',
      kind: 'nodeStage',
      params: { [`${P}node-stage-secret-name`]: 's' },
      msg: /both must be specified/,
    },
    {
      name: 'annotations on the provisioner secret',
      kind: 'provisioner',
      params: {
        [`${P}provisioner-secret-name`]: "${pvc.annotations['owner']}",
        [`${P}provisioner-secret-namespace`]: 'x',
      },
      msg: /not allowed/,
    },
    {
      name: 'pvc.name in a namespace',
      kind: 'provisioner',
      params: { [`${P}provisioner-secret-name`]: 's', [`${P}provisioner-secret-namespace`]: '${pvc.name}' },
      msg: /not allowed/,
    },
    {
      name: 'invalid resolved name',
      kind: 'provisioner',
      params: { [`${P}provisioner-secret-name`]: 'Bad_Name', [`${P}provisioner-secret-namespace`]: 'x' },
      msg: /not a valid secret name/,
    },
  ])('refuses $name', ({ kind, params, msg }) => {
    expect(() => resolveSecretRef(kind, params, ctx)).toThrow(InvalidError);
    expect(() => resolveSecretRef(kind, params, ctx)).toThrow(msg);
  });
});

describe('driverParameters', () => {
  it('drops the reserved keys and keeps the rest', () => {
    expect(driverParameters({ [`${P}fstype`]: 'xfs', [`${P}provisioner-secret-name`]: 's', a: '1' })).toEqual({
      a: '1',
    });
  });
  it('refuses an unknown reserved key', () => {
    expect(() => driverParameters({ [`${P}fs-type`]: 'xfs' })).toThrow(/reserved namespace/);
  });
});

it('secretData decodes base64 values', () => {
  expect(secretData({ k: Buffer.from('v1').toString('base64') })).toEqual({ k: 'v1' });
});
