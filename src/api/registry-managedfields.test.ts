import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../store/sqlite.js';
import type { Store } from '../store/store.js';
import { applyConfig } from './fieldmanager/fieldmanager.js';
import { FieldSet, pathString } from './fieldmanager/fieldset.js';
import { ApiRegistry, type ResourceStorage } from './registry.js';
import { formatInvalidMessage } from './resources/common.js';
import { ALL_RESOURCES } from './resources/index.js';
import type { KubeObject } from './resources/types.js';

// kube-apiserver records a request's fields (after decoding and defaulting) before its mutating
// admission plugins run: what admission adds (protection finalizers, the default class, default
// tolerations, priority) is owned by no manager, and later writers neither inherit it by resending
// it unchanged nor conflict when they apply the same value.

const T = '2024-01-01T00:00:00Z';
const FINALIZERS = '.metadata.finalizers';
const PVC_FINALIZER = '.metadata.finalizers[="kubernetes.io/pvc-protection"]';

/** manager/operation → the leaf paths it owns (a map's own `.` entry left out), sorted. */
function owners(o: KubeObject): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const e of (o.metadata.managedFields ?? []) as Array<{
    manager: string;
    operation: string;
    fieldsV1: unknown;
  }>) {
    const ps = FieldSet.fromFieldsV1(e.fieldsV1).paths().map(pathString);
    out[`${e.manager}/${e.operation}`] = ps
      .filter((p) => !ps.some((q) => q.startsWith(`${p}.`) || q.startsWith(`${p}[`)))
      .sort();
  }
  return out;
}

function sorted(want: Record<string, string[]>): Record<string, string[]> {
  return Object.fromEntries(Object.entries(want).map(([k, v]) => [k, [...v].sort()]));
}

function allOwned(o: KubeObject): string[] {
  return Object.values(owners(o)).flat();
}

describe('managedFields of writes through the registry', () => {
  let store: Store;
  let registry: ApiRegistry;
  beforeAll(async () => {
    store = openSqliteStore({ path: ':memory:' });
    registry = new ApiRegistry(store, ALL_RESOURCES, formatInvalidMessage);
    await registry.start();
    await registry.ensureInitialObjects();
    await storage('storage.k8s.io', 'storageclasses').create(
      {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name: 'standard', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
        provisioner: 'hostpath.csi.k8s.io',
      },
      undefined,
    );
  });
  afterAll(async () => {
    registry.stop();
    await store.close();
  });
  function storage(group: string, plural: string): ResourceStorage {
    return registry.byGroupVersionPlural(group, 'v1', plural)!;
  }

  describe('fields set by mutating admission belong to no manager', () => {
    let n = 0;
    const claims = () => storage('', 'persistentvolumeclaims');
    const claim = (name: string, extra: Record<string, unknown> = {}): KubeObject => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...extra },
    });
    const fresh = (): string => `c${++n}`;
    const update = (name: string, manager: string, change: (o: KubeObject) => void) =>
      claims().update(
        'default',
        name,
        (cur) => {
          const o = structuredClone(cur);
          change(o);
          return o;
        },
        { fields: { update: manager } },
      );
    const apply = async (name: string, manager: string, config: KubeObject, force = false) => {
      const scope = claims().fieldScope();
      const cfg = { ...config, metadata: { ...config.metadata, name, namespace: 'default' } };
      if (!claims().get('default', name))
        return claims().create(
          applyConfig(scope, { live: undefined, config: cfg, manager, force, now: T }),
          'default',
          { fields: 'applied' },
        );
      return claims().update(
        'default',
        name,
        (live) => applyConfig(scope, { live, config: structuredClone(cfg), manager, force, now: T }),
        { fields: 'applied' },
      );
    };

    it('create (Update operation): defaults are the creator’s, the finalizer and default class are no one’s', async () => {
      const out = await claims().create(claim(fresh()), 'default', { fields: { update: 'kubectl-create' } });
      expect(out.metadata.finalizers).toEqual(['kubernetes.io/pvc-protection']);
      expect((out.spec as { storageClassName?: string }).storageClassName).toBe('standard');
      expect(owners(out)).toEqual({
        'kubectl-create/Update': ['.spec.accessModes', '.spec.resources.requests.storage', '.spec.volumeMode'],
      });
    });

    type Case = {
      name: string;
      steps: (c: string) => Promise<KubeObject>;
      want: Record<string, string[]>;
      finalizers: string[] | undefined;
    };
    it.each<Case>([
      {
        name: 'create by apply: the applier owns what it applied only',
        steps: async (c: string) => apply(c, 'ssa', claim(c)),
        want: { 'ssa/Apply': ['.spec.accessModes', '.spec.resources.requests.storage'] },
        finalizers: ['kubernetes.io/pvc-protection'],
      },
      {
        name: 'the creator resending the whole object (replace) does not take the admission fields',
        steps: async (c: string) => {
          await claims().create(claim(c), 'default', { fields: { update: 'kubectl-create' } });
          return update(c, 'kubectl-replace', (o) => void (o.metadata.labels = { app: 'x' }));
        },
        want: {
          'kubectl-create/Update': ['.spec.accessModes', '.spec.resources.requests.storage', '.spec.volumeMode'],
          'kubectl-replace/Update': ['.metadata.labels.app'],
        },
        finalizers: ['kubernetes.io/pvc-protection'],
      },
      {
        name: 'an applier setting the same class and finalizer becomes their owner without conflict',
        steps: async (c: string) => {
          await claims().create(claim(c), 'default', { fields: { update: 'kubectl-create' } });
          return apply(c, 'gitops', {
            ...claim(c, { storageClassName: 'standard' }),
            metadata: { name: c, finalizers: ['kubernetes.io/pvc-protection'] },
          });
        },
        want: {
          'gitops/Apply': [
            '.spec.accessModes',
            '.spec.resources.requests.storage',
            '.spec.storageClassName',
            PVC_FINALIZER,
          ],
          'kubectl-create/Update': ['.spec.accessModes', '.spec.resources.requests.storage', '.spec.volumeMode'],
        },
        finalizers: ['kubernetes.io/pvc-protection'],
      },
      {
        name: 'an applier re-applying without the finalizer does not prune what it never owned',
        steps: async (c: string) => {
          await apply(c, 'ssa', claim(c));
          return apply(c, 'ssa', { ...claim(c), metadata: { name: c, labels: { a: '1' } } });
        },
        want: { 'ssa/Apply': ['.metadata.labels.a', '.spec.accessModes', '.spec.resources.requests.storage'] },
        finalizers: ['kubernetes.io/pvc-protection'],
      },
      {
        name: 'an applier that owned the finalizer and stops applying it removes it (sole owner)',
        steps: async (c: string) => {
          await apply(c, 'ssa', { ...claim(c), metadata: { name: c, finalizers: ['kubernetes.io/pvc-protection'] } });
          return apply(c, 'ssa', claim(c));
        },
        want: { 'ssa/Apply': ['.spec.accessModes', '.spec.resources.requests.storage'] },
        finalizers: undefined,
      },
    ])('$name', async ({ steps, want, finalizers }) => {
      const c = fresh();
      const out = await steps(c);
      expect(owners(out)).toEqual(sorted(want));
      expect(out.metadata.finalizers).toEqual(finalizers);
    });

    it('a PV’s pv-protection finalizer is no one’s; its defaulted reclaim policy is the creator’s', async () => {
      const pv = await storage('', 'persistentvolumes').create(
        {
          apiVersion: 'v1',
          kind: 'PersistentVolume',
          metadata: { name: 'pv-adm' },
          spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/x' } },
        },
        undefined,
        { fields: { update: 'csi-provisioner' } },
      );
      expect(pv.metadata.finalizers).toEqual(['kubernetes.io/pv-protection']);
      const owned = allOwned(pv);
      expect(owned).toContain('.spec.persistentVolumeReclaimPolicy');
      expect(owned.filter((p) => p.startsWith(FINALIZERS))).toEqual([]);
    });

    it('a pod’s admission tolerations and priority are no one’s; its defaults are the creator’s', async () => {
      const pod = await storage('', 'pods').create(
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'p-adm' },
          spec: { containers: [{ name: 'c', image: 'busybox:1.36' }] },
        },
        'default',
        { fields: { update: 'kubectl-run' } },
      );
      expect((pod.spec as { tolerations?: unknown[] }).tolerations).toHaveLength(2);
      expect((pod.spec as { priority?: number }).priority).toBe(0);
      const owned = allOwned(pod);
      expect(owned).toContain('.spec.dnsPolicy');
      expect(
        owned.filter(
          (p) => p.startsWith('.spec.tolerations') || p === '.spec.priority' || p === '.spec.preemptionPolicy',
        ),
      ).toEqual([]);
    });

    it('a later patch (Update operation) owns only what it changed; removing the unowned finalizer leaves no trace', async () => {
      const c = fresh();
      await claims().create(claim(c), 'default', { fields: { update: 'kubectl-create' } });
      const patched = await update(c, 'kubectl-patch', (o) => void (o.metadata.finalizers = []));
      expect(patched.metadata.finalizers ?? []).toEqual([]);
      expect(owners(patched)).toEqual({
        'kubectl-create/Update': ['.spec.accessModes', '.spec.resources.requests.storage', '.spec.volumeMode'],
      });
    });
  });

  describe('fields the strategy sets belong to no manager; decode-time defaults are the writer’s', () => {
    it.each([
      {
        name: 'Namespace: the name label is defaulted (the creator’s), spec.finalizers the strategy’s (no one’s)',
        group: '',
        plural: 'namespaces',
        namespace: undefined,
        obj: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'mf-ns' } },
        fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:kubernetes.io/metadata.name': {} } } },
      },
      {
        name: 'Service: SetDefaults_Service fields are the creator’s, the allocated ClusterIP no one’s',
        group: '',
        plural: 'services',
        namespace: 'default',
        obj: {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 's', labels: { app: 's' } },
          spec: {
            ports: [{ name: '80-80', port: 80, protocol: 'TCP', targetPort: 80 }],
            selector: { app: 's' },
            type: 'ClusterIP',
          },
        },
        fieldsV1: {
          'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
          'f:spec': {
            'f:internalTrafficPolicy': {},
            'f:ports': {
              '.': {},
              'k:{"port":80,"protocol":"TCP"}': {
                '.': {},
                'f:name': {},
                'f:port': {},
                'f:protocol': {},
                'f:targetPort': {},
              },
            },
            'f:selector': { '.': {}, 'f:app': {} },
            'f:sessionAffinity': {},
            'f:type': {},
          },
        },
      },
    ])('$name', async ({ group, plural, namespace, obj, fieldsV1 }) => {
      const s = storage(group, plural);
      const out = await s.create(structuredClone(obj) as KubeObject, namespace, {
        fields: { update: 'kubectl-create' },
      });
      expect(out.metadata.managedFields).toEqual([
        {
          manager: 'kubectl-create',
          operation: 'Update',
          apiVersion: 'v1',
          time: expect.any(String),
          fieldsType: 'FieldsV1',
          fieldsV1,
        },
      ]);
    });

    it('Job: the generated selector and its labels are no one’s', async () => {
      const jobs = storage('batch', 'jobs');
      const out = await jobs.create(
        {
          apiVersion: 'batch/v1',
          kind: 'Job',
          metadata: { name: 'j' },
          spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
        },
        'default',
        { fields: { update: 'kubectl-create' } },
      );
      expect((out.spec as { selector?: unknown }).selector).toBeDefined();
      const spec = (out.metadata.managedFields as Array<{ fieldsV1: { 'f:spec': Record<string, unknown> } }>)[0]!
        .fieldsV1['f:spec'];
      expect(spec).not.toHaveProperty('f:selector');
      expect(spec['f:template']).not.toHaveProperty('f:metadata');
      expect(spec).toHaveProperty('f:backoffLimit');
    });
  });
});
