import { describe, expect, it } from 'vitest';
import type { Container, Pod, ResourceRequirements } from 'kubernetes-types/core/v1.js';
import {
  ContainerConfigError,
  containerEnv,
  expandSubPathExpr,
  expandVars,
  resourceFieldValue,
  type EnvSources,
} from './env.js';

const pod: Pod = {
  metadata: { name: 'p', namespace: 'ns', uid: 'u1', labels: { app: 'web' }, annotations: { team: 'storage' } },
  spec: { nodeName: 'n1', serviceAccountName: 'sa', containers: [{ name: 'c' }] },
};
const objects: Record<string, Record<string, string>> = {
  'ns/settings': { word: 'configured', 'bad=name': 'x' },
  'ns/creds': { password: 's3cret' },
};
const src: EnvSources = {
  hostIPs: ['10.0.0.5', 'fd00::5'],
  configMap: (ns, n) => (n === 'settings' ? objects[`${ns}/${n}`] : undefined),
  secret: (ns, n) => (n === 'creds' ? objects[`${ns}/${n}`] : undefined),
  allocatable: { cpu: '4', memory: '8Gi' },
};
const env = (c: Partial<Container>): Array<[string, string]> => [...containerEnv(pod, { name: 'c', ...c }, src).env];

describe('container env', () => {
  it('expands $(VAR) from earlier variables; $$ escapes; unknown names stay', () => {
    expect(expandVars('a $(X) $$(X) $(Y)', new Map([['X', '1']]))).toBe('a 1 $(X) $(Y)');
  });

  it.each([
    { fieldPath: 'metadata.name', want: 'p' },
    { fieldPath: 'metadata.namespace', want: 'ns' },
    { fieldPath: 'metadata.uid', want: 'u1' },
    { fieldPath: "metadata.labels['app']", want: 'web' },
    { fieldPath: "metadata.annotations['team']", want: 'storage' },
    { fieldPath: 'spec.nodeName', want: 'n1' },
    { fieldPath: 'spec.serviceAccountName', want: 'sa' },
    { fieldPath: 'status.hostIP', want: '10.0.0.5' },
    { fieldPath: 'status.podIP', want: '10.0.0.5' },
    { fieldPath: 'status.podIPs', want: '10.0.0.5,fd00::5' },
    { fieldPath: 'status.hostIPs', want: '10.0.0.5,fd00::5' },
  ])('fieldRef $fieldPath = $want', ({ fieldPath, want }) => {
    expect(env({ env: [{ name: 'V', valueFrom: { fieldRef: { fieldPath } } }] })).toEqual([['V', want]]);
  });

  it('envFrom comes first (with its prefix), env overrides it and expands against it; invalid names are skipped and reported', () => {
    const c: Container = {
      name: 'c',
      envFrom: [
        { configMapRef: { name: 'settings' }, prefix: 'CM_' },
        { secretRef: { name: 'creds' } },
        { configMapRef: { name: 'absent', optional: true } },
      ],
      env: [{ name: 'CM_word', value: 'over $(password)' }],
    };
    const r = containerEnv(pod, c, src);
    expect([...r.env]).toEqual([
      ['CM_word', 'over s3cret'],
      ['password', 's3cret'],
    ]);
    expect(r.invalidKeys).toEqual([{ source: 'configMap ns/settings', keys: ['CM_bad=name'] }]);
  });

  it.each([
    {
      name: 'missing key',
      c: { env: [{ name: 'K', valueFrom: { configMapKeyRef: { name: 'settings', key: 'nope' } } }] },
      message: "couldn't find key nope in ConfigMap ns/settings",
    },
    {
      name: 'missing secret key',
      c: { env: [{ name: 'K', valueFrom: { secretKeyRef: { name: 'creds', key: 'nope' } } }] },
      message: "couldn't find key nope in Secret ns/creds",
    },
    {
      name: 'missing configMap',
      c: { env: [{ name: 'K', valueFrom: { configMapKeyRef: { name: 'gone', key: 'k' } } }] },
      message: 'configmap "gone" not found',
    },
    {
      name: 'missing envFrom secret',
      c: { envFrom: [{ secretRef: { name: 'gone' } }] },
      message: 'secret "gone" not found',
    },
  ])('$name → CreateContainerConfigError "$message"; optional → skipped', ({ c, message }) => {
    expect(() => env(c)).toThrow(new ContainerConfigError(message));
    const optional = JSON.parse(
      JSON.stringify(c).replace(/"name":"(gone|settings|creds)"/g, '"name":"$1","optional":true'),
    ) as Partial<Container>;
    expect(env(optional)).toEqual([]);
  });

  it.each<{ resource: string; divisor: string | undefined; resources: ResourceRequirements; want: string }>([
    { resource: 'limits.cpu', divisor: undefined, resources: { limits: { cpu: '250m' } }, want: '1' },
    { resource: 'limits.cpu', divisor: '1m', resources: { limits: { cpu: '250m' } }, want: '250' },
    { resource: 'requests.cpu', divisor: '1m', resources: { limits: { cpu: '500m' } }, want: '500' },
    { resource: 'requests.cpu', divisor: undefined, resources: {}, want: '0' },
    { resource: 'limits.cpu', divisor: undefined, resources: {}, want: '4' },
    { resource: 'limits.memory', divisor: '1Mi', resources: { limits: { memory: '64Mi' } }, want: '64' },
    { resource: 'limits.memory', divisor: '1Gi', resources: {}, want: '8' },
    { resource: 'requests.memory', divisor: '1Mi', resources: { requests: { memory: '1500Ki' } }, want: '2' },
  ])('resourceFieldRef $resource / $divisor of $resources = $want', ({ resource, divisor, resources, want }) => {
    expect(
      resourceFieldValue(pod, { name: 'c', resources }, { resource, ...(divisor ? { divisor } : {}) }, src.allocatable),
    ).toBe(want);
  });

  it('subPathExpr expands the env and must stay inside the volume', () => {
    expect(expandSubPathExpr('logs/$(POD)', new Map([['POD', 'p']]))).toBe('logs/p');
    expect(() => expandSubPathExpr('$(UP)/x', new Map([['UP', '..']]))).toThrow(ContainerConfigError);
    expect(() => expandSubPathExpr('$(ABS)', new Map([['ABS', '/etc']]))).toThrow(ContainerConfigError);
  });
});
