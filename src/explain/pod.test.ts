import { describe, expect, it } from 'vitest';
import { attachmentName } from '../controllers/attachdetach/types.js';
import { claim, csiNode, node, pod, storageClass, volume } from '../controllers/scheduler/fixtures.test-kit.js';
import { schedulePod } from '../controllers/scheduler/schedule.js';
import { REASONS } from '../controllers/scheduler/types.js';
import type { Pod, VolumeAttachment } from './source.js';
import { clusterViewOf } from './source.js';
import { explainPod } from './pod.js';
import { memorySource, type World } from './source.test-kit.js';

const boundClaim = claim('data', { bound: true, volumeName: 'pv1' });
const pv1 = volume('pv1', { claim: 'data', driver: 'd.csi', handle: 'h1' });
const onNode = (p: Pod, st: Pod['status']): Pod => ({ ...p, spec: { ...p.spec!, nodeName: 'n1' }, status: st });

describe("explainPod: scheduling, with the scheduler's own verdict per node", () => {
  it.each<{ name: string; world: World; summary: string; findings: string[] }>([
    {
      name: 'one node cordoned, another outside the class topology',
      world: {
        nodes: [node('n1', {}, { unschedulable: true }), node('n2', { zone: 'b' })],
        claims: [claim('data')],
        classes: [storageClass('wffc', { zones: ['a'] })],
        csiNodes: [csiNode('n2', [{}])],
      },
      summary: 'unschedulable: no node of 2 fits',
      findings: [`node n1: ${REASONS.nodeUnschedulable}`, `node n2: ${REASONS.bindConflict}`],
    },
    {
      name: 'a bound volume whose node affinity excludes the node',
      world: {
        nodes: [node('n1')],
        claims: [claim('data', { bound: true, volumeName: 'pv9' })],
        volumes: [volume('pv9', { claim: 'data', nodes: ['n0'] })],
      },
      summary: 'unschedulable: no node of 1 fits',
      findings: [`node n1: ${REASONS.nodeConflict}`],
    },
    {
      name: 'the node is full (CSINode allocatable count)',
      world: {
        nodes: [node('n1')],
        claims: [boundClaim, claim('other', { bound: true, volumeName: 'pv2' })],
        volumes: [pv1, volume('pv2', { claim: 'other', driver: 'd.csi', handle: 'h2' })],
        pods: [pod('user', ['other'], { nodeName: 'n1' })],
        csiNodes: [csiNode('n1', [{ name: 'd.csi', count: 1 }])],
      },
      summary: 'unschedulable: no node of 1 fits',
      findings: [`node n1: ${REASONS.maxVolumeCount}`],
    },
  ])('$name', ({ world, summary, findings }) => {
    const p = pod('p', ['data']);
    const s = memorySource({ ...world, pods: [...(world.pods ?? []), p] });
    // Same verdict as the scheduler's cycle.
    expect(schedulePod(p, clusterViewOf(s)).kind).toBe('unschedulable');
    const e = explainPod(p, s);
    expect(e.summary).toBe(summary);
    expect(e.findings.map((f) => f.message)).toEqual(findings);
  });

  it("an unbound immediate claim: the PreFilter message and the claim's own reason", () => {
    const c = claim('data', { cls: 'imm' });
    const p = pod('p', ['data']);
    const e = explainPod(
      p,
      memorySource({ nodes: [node('n1')], claims: [c], classes: [storageClass('imm', { wffc: false })], pods: [p] }),
    );
    expect(e.summary).toBe('unschedulable: pod has unbound immediate PersistentVolumeClaims');
    expect(e.findings[0]?.message).toMatch(/^claim data: waiting for hostpath.csi.k8s.io to create a volume/);
    expect(e.related).toEqual([{ kind: 'PersistentVolumeClaim', namespace: 'default', name: 'data' }]);
  });
});

describe('explainPod: after scheduling', () => {
  const base: World = { nodes: [node('n1')], claims: [boundClaim], volumes: [pv1] };
  const va = (status: VolumeAttachment['status']): VolumeAttachment => ({
    metadata: { name: attachmentName('h1', 'd.csi', 'n1') },
    spec: { attacher: 'd.csi', nodeName: 'n1', source: { persistentVolumeName: 'pv1' } },
    status: status ?? { attached: false },
  });
  const p = onNode(pod('p', ['data']), {
    phase: 'Pending',
    containerStatuses: [
      {
        name: 'c',
        image: 'busybox',
        imageID: '',
        ready: false,
        restartCount: 0,
        state: { waiting: { reason: 'ContainerCreating' } },
      },
    ],
  });
  const ev = (reason: string, message: string) => ({
    metadata: { name: `p.${reason}`, namespace: 'default' },
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'p' },
    type: 'Warning',
    reason,
    message,
  });

  it.each<{ name: string; world: World; pod?: Pod; summary: RegExp }>([
    {
      name: 'no VolumeAttachment yet',
      world: {},
      summary:
        /^waiting for the attach\/detach controller to create VolumeAttachment csi-[0-9a-f]+ \(volume pv1 on node n1\)$/,
    },
    {
      name: 'attacher working',
      world: { attachments: [va({ attached: false })] },
      summary: /^waiting for d.csi's attacher to attach volume pv1 to node n1$/,
    },
    {
      name: 'attach failed',
      world: {
        attachments: [
          va({ attached: false, attachError: { message: 'rpc error: code = NotFound desc = no such volume' } }),
        ],
      },
      summary: /^attaching volume pv1 to node n1 failed: rpc error: code = NotFound desc = no such volume$/,
    },
    {
      name: 'stage failed with the driver message',
      world: {
        attachments: [va({ attached: true })],
        events: [
          ev(
            'FailedMount',
            'MountVolume.MountDevice failed for volume "pv1" : rpc error: code = Internal desc = mkfs failed',
          ),
        ],
      },
      summary:
        /^the node cannot set up a volume \(FailedMount\): MountVolume.MountDevice failed for volume "pv1" : rpc error: code = Internal desc = mkfs failed$/,
    },
    {
      name: "the driver's answer kept in the CSI trace",
      world: {
        attachments: [va({ attached: true })],
        csiCalls: [
          {
            id: 1,
            method: '/csi.v1.Node/NodeStageVolume',
            volumeId: 'h1',
            startMs: 0,
            durationMs: 5,
            code: 'OK',
            driver: 'd.csi',
            caller: 'kubelet',
            request: {},
          },
          {
            id: 2,
            method: '/csi.v1.Node/NodePublishVolume',
            volumeId: 'h1',
            startMs: 0,
            durationMs: 5,
            code: 'PERMISSION_DENIED',
            error: 'target is read-only',
            driver: 'd.csi',
            caller: 'kubelet',
            request: {},
          },
        ],
      },
      summary:
        /^the node cannot set up a volume: NodePublishVolume of volume pv1 failed: PERMISSION_DENIED: target is read-only$/,
    },
    {
      name: 'image pull',
      world: { attachments: [va({ attached: true })] },
      pod: onNode(pod('p', ['data']), {
        phase: 'Pending',
        containerStatuses: [
          {
            name: 'c',
            image: 'x',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { waiting: { reason: 'ErrImagePull', message: 'not found' } },
          },
        ],
      }),
      summary: /^container c is waiting: ErrImagePull \(not found\)$/,
    },
    {
      name: 'init container crashing',
      world: { attachments: [va({ attached: true })] },
      pod: onNode(pod('p', ['data']), {
        phase: 'Pending',
        initContainerStatuses: [
          {
            name: 'init',
            image: 'x',
            imageID: '',
            ready: false,
            restartCount: 3,
            state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s' } },
          },
        ],
      }),
      summary: /^init container init is waiting: CrashLoopBackOff \(back-off 40s\)$/,
    },
    {
      name: 'sandbox not ready',
      world: { attachments: [va({ attached: true })] },
      pod: onNode(pod('p', ['data']), {
        phase: 'Pending',
        conditions: [{ type: 'PodReadyToStartContainers', status: 'False' }],
      }),
      summary: /^waiting for the pod sandbox on node n1$/,
    },
    {
      name: 'running',
      world: { attachments: [va({ attached: true })] },
      pod: onNode(pod('p', ['data']), {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True' }],
        containerStatuses: [
          { name: 'c', image: 'x', imageID: '', ready: true, restartCount: 0, state: { running: {} } },
        ],
      }),
      summary: /^running on node n1$/,
    },
  ])('$name', ({ world, pod: p0 = p, summary }) => {
    const e = explainPod(p0, memorySource({ ...base, ...world, pods: [p0] }));
    expect(e.summary).toMatch(summary);
  });
});
