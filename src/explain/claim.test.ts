import { describe, expect, it } from 'vitest';
import { findBestMatchLinear } from '../controllers/persistentvolume/match.js';
import { NS, pv, pvc, storageClass } from '../controllers/persistentvolume/fixtures.test-kit.js';
import type { PersistentVolume, PersistentVolumeClaim } from './source.js';
import { explainClaim } from './claim.js';
import { memorySource } from './source.test-kit.js';
import { renderExplanation } from './render.js';

const NO_CLASS = 'no persistent volumes available for this claim and no storage class is set';

function deleting(v: PersistentVolume): PersistentVolume {
  return { ...v, metadata: { ...v.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } };
}

describe('explainClaim: each refusal of the PV controller matcher', () => {
  const claim = pvc('c', '1Gi');
  it.each<{ name: string; claim?: PersistentVolumeClaim; volume: PersistentVolume; code: string; text: RegExp }>([
    {
      name: 'class',
      volume: pv('v', '1Gi', { cls: 'silver' }),
      code: 'storageClass',
      text: /class "silver" differs from the claim's no class/,
    },
    {
      name: 'size',
      volume: pv('v', '500Mi'),
      code: 'tooSmall',
      text: /capacity 500Mi is smaller than the 1Gi requested/,
    },
    {
      name: 'access modes',
      volume: pv('v', '1Gi', { modes: ['ReadOnlyMany'] }),
      code: 'accessModes',
      text: /access modes ROX do not include all of the claim's RWO/,
    },
    {
      name: 'volumeMode',
      volume: pv('v', '1Gi', { volumeMode: 'Block' }),
      code: 'volumeMode',
      text: /volumeMode Block does not match the claim's Filesystem/,
    },
    {
      name: 'selector',
      claim: { ...claim, spec: { ...claim.spec, selector: { matchLabels: { tier: 'db' } } } },
      volume: pv('v', '1Gi', { labels: { tier: 'web' } }),
      code: 'selector',
      text: /labels do not match the claim's selector/,
    },
    {
      name: 'already bound',
      volume: pv('v', '1Gi', { phase: 'Bound', claim: { name: 'other', uid: 'u2' } }),
      code: 'alreadyBound',
      text: /already bound to claim ns\/other/,
    },
    {
      name: 'pre-bound elsewhere',
      volume: pv('v', '1Gi', { claim: { name: 'other' } }),
      code: 'preboundElsewhere',
      text: /pre-bound to another claim, ns\/other/,
    },
    { name: 'being deleted', volume: deleting(pv('v', '1Gi')), code: 'beingDeleted', text: /being deleted/ },
    {
      name: 'not Available',
      volume: pv('v', '1Gi', { phase: 'Released' }),
      code: 'notAvailable',
      text: /phase is Released, not Available/,
    },
  ])('$name', ({ claim: c = claim, volume, code, text }) => {
    // The controller's own matcher refuses it too: the explanation is not a second opinion.
    expect(findBestMatchLinear(c, [volume], { delayBinding: false })).toBeNull();
    const e = explainClaim(c, memorySource({ claims: [c], volumes: [volume] }));
    expect(e).toMatchObject({ state: 'Pending', ready: false, summary: NO_CLASS });
    expect(e.findings).toEqual([
      { code, message: expect.stringMatching(text), object: { kind: 'PersistentVolume', name: 'v' } },
    ]);
  });

  it('node affinity refuses a volume on the node the scheduler selected', () => {
    const c = pvc('c', '1Gi', { cls: 'wffc', annotations: { 'volume.kubernetes.io/selected-node': 'n1' } });
    const v = pv('v', '1Gi', {
      cls: 'wffc',
      source: {
        local: { path: '/x' },
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n2'] }] },
            ],
          },
        },
      },
    });
    const n1 = { metadata: { name: 'n1', labels: { 'kubernetes.io/hostname': 'n1' } } };
    const e = explainClaim(
      c,
      memorySource({
        claims: [c],
        volumes: [v],
        nodes: [n1],
        classes: [storageClass('wffc', 'p.csi', 'WaitForFirstConsumer')],
      }),
    );
    expect(e.findings).toContainEqual(
      expect.objectContaining({ code: 'nodeAffinity', message: 'volume v: its node affinity does not allow node n1' }),
    );
  });
});

describe('explainClaim: the other states', () => {
  it('a matching volume: the controller is binding it', () => {
    const c = pvc('c', '1Gi');
    const e = explainClaim(c, memorySource({ claims: [c], volumes: [pv('small', '2Gi'), pv('big', '5Gi')] }));
    expect(e.summary).toBe('volume small matches; the PV controller is binding it');
  });

  it('WaitForFirstConsumer without pods, then with an unscheduled pod', () => {
    const c = pvc('c', '1Gi', { cls: 'wffc' });
    const cls = storageClass('wffc', 'p.csi', 'WaitForFirstConsumer');
    expect(explainClaim(c, memorySource({ claims: [c], classes: [cls] })).summary).toBe(
      'waiting for first consumer to be created before binding (class wffc is WaitForFirstConsumer)',
    );
    const pod = {
      metadata: { name: 'p', namespace: NS },
      spec: { containers: [], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'c' } }] },
    };
    const e = explainClaim(c, memorySource({ claims: [c], classes: [cls], pods: [pod] }));
    expect(e.summary).toMatch(/^waiting for pod p to be scheduled/);
    expect(e.related).toEqual([{ kind: 'Pod', namespace: NS, name: 'p' }]);
  });

  it("provisioning: the provisioner's last error and the capacity per segment", () => {
    const c = pvc('c', '1Gi', { cls: 'fast' });
    const ev = (message: string, t: string) => ({
      metadata: { name: `c.${t}`, namespace: NS },
      involvedObject: { kind: 'PersistentVolumeClaim', namespace: NS, name: 'c' },
      reason: 'ProvisioningFailed',
      type: 'Warning',
      message,
      lastTimestamp: t,
    });
    const cap = {
      metadata: { name: 'cap1', namespace: 'kube-system' },
      storageClassName: 'fast',
      nodeTopology: { matchLabels: { zone: 'a' } },
      capacity: '10Gi',
      maximumVolumeSize: '2Gi',
    };
    const e = explainClaim(
      c,
      memorySource({
        claims: [c],
        classes: [storageClass('fast', 'p.csi')],
        events: [
          ev('rpc error: code = ResourceExhausted desc = full', '2026-01-01T00:00:02Z'),
          ev('older', '2026-01-01T00:00:01Z'),
        ],
        capacities: [cap],
        csiDrivers: [{ metadata: { name: 'p.csi' }, spec: { storageCapacity: true } }],
      }),
    );
    expect(e.summary).toBe('provisioning by p.csi failed; it retries with backoff');
    expect(e.findings.map((f) => f.message)).toEqual([
      "the provisioner's last error: rpc error: code = ResourceExhausted desc = full",
      'segment zone=a: capacity 10Gi, largest volume 2Gi',
    ]);
    expect(renderExplanation(e)).toContain('pvc/c in namespace ns is Pending: provisioning by p.csi failed');
  });

  it('a provisioner not yet answering; a missing class', () => {
    const c = pvc('c', '1Gi', { cls: 'fast' });
    expect(explainClaim(c, memorySource({ claims: [c], classes: [storageClass('fast', 'p.csi')] })).summary).toBe(
      'waiting for p.csi to create a volume (no matching volume exists)',
    );
    expect(explainClaim(c, memorySource({ claims: [c] })).summary).toBe('storageclass.storage.k8s.io "fast" not found');
  });

  it('bound, and a requested volume missing or unsuitable', () => {
    const c = pvc('c', '1Gi', {
      volumeName: 'v',
      phase: 'Bound',
      annotations: { 'pv.kubernetes.io/bind-completed': 'yes' },
    });
    const v = pv('v', '1Gi', { phase: 'Bound', claim: { name: 'c', uid: 'uid-c' } });
    expect(explainClaim(c, memorySource({ claims: [c], volumes: [v] }))).toMatchObject({
      ready: true,
      summary: 'bound to volume v (1Gi)',
    });
    const r = pvc('r', '1Gi', { volumeName: 'gone' });
    expect(explainClaim(r, memorySource({ claims: [r] })).summary).toBe(
      'waiting for the requested volume gone, which does not exist',
    );
    const small = pvc('s', '1Gi', { volumeName: 'tiny' });
    expect(explainClaim(small, memorySource({ claims: [small], volumes: [pv('tiny', '1Mi')] })).summary).toBe(
      'Cannot bind to requested volume "tiny": requested PV is too small',
    );
  });
});
