import type { Endpoints } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import { describe, expect, it } from 'vitest';
import { firstServiceIp, parseCidr } from '../resources/serviceip.js';
import {
  advertiseAddress,
  desiredEndpoints,
  desiredSlice,
  kubernetesService,
  strayKubernetesSlices,
} from './decide.js';

const meta = { name: 'kubernetes', namespace: 'default', resourceVersion: '7', uid: 'u1' };

describe('the kubernetes Service', () => {
  it("is ClusterIP on the range's first address, port https 443 → the secure port, no selector, labelled as upstream", () => {
    expect(kubernetesService(firstServiceIp(parseCidr('10.96.0.0/12')), 6443)).toEqual({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: 'kubernetes',
        namespace: 'default',
        labels: { component: 'apiserver', provider: 'kubernetes' },
      },
      spec: {
        type: 'ClusterIP',
        clusterIP: '10.96.0.1',
        ipFamilyPolicy: 'SingleStack',
        sessionAffinity: 'None',
        ports: [{ name: 'https', protocol: 'TCP', port: 443, targetPort: 6443 }],
      },
    });
    expect(firstServiceIp(parseCidr('172.20.5.0/24'))).toBe('172.20.5.1');
  });
});

describe('its Endpoints', () => {
  const current = (
    ips: string[],
    port = 6443,
    labels: Record<string, string> = { 'endpointslice.kubernetes.io/skip-mirror': 'true' },
  ): Endpoints => ({
    metadata: { ...meta, labels },
    subsets: [{ addresses: ips.map((ip) => ({ ip })), ports: [{ name: 'https', port, protocol: 'TCP' }] }],
  });

  it('absent → one subset of the sorted addresses, skip-mirror label', () => {
    expect(desiredEndpoints(undefined, ['10.0.0.2', '10.0.0.1'], 6443, false)).toEqual({
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: {
        name: 'kubernetes',
        namespace: 'default',
        labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' },
      },
      subsets: [
        {
          addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }],
          ports: [{ name: 'https', port: 6443, protocol: 'TCP' }],
        },
      ],
    });
  });
  it.each([
    {
      name: 'same addresses, other order → no write',
      cur: current(['10.0.0.1', '10.0.0.2']),
      ips: ['10.0.0.2', '10.0.0.1'],
      reconcilePorts: true,
      writes: false,
    },
    {
      name: 'a server gone → rewritten',
      cur: current(['10.0.0.1', '10.0.0.2']),
      ips: ['10.0.0.1'],
      reconcilePorts: false,
      writes: true,
    },
    {
      name: 'a user label → replaced by exactly skip-mirror',
      cur: current(['10.0.0.1'], 6443, { x: 'y' }),
      ips: ['10.0.0.1'],
      reconcilePorts: false,
      writes: true,
    },
    {
      name: 'another port, not reconciling ports → kept',
      cur: current(['10.0.0.1'], 7443),
      ips: ['10.0.0.1'],
      reconcilePorts: false,
      writes: false,
    },
    {
      name: 'another port, reconciling ports → reset',
      cur: current(['10.0.0.1'], 7443),
      ips: ['10.0.0.1'],
      reconcilePorts: true,
      writes: true,
    },
  ])('$name', ({ cur, ips, reconcilePorts, writes }) => {
    const got = desiredEndpoints(cur, ips, 6443, reconcilePorts);
    if (!writes) return expect(got).toBeUndefined();
    expect(got?.metadata).toEqual({ ...meta, labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } });
    expect(got?.subsets).toEqual([
      {
        addresses: [...ips].sort().map((ip) => ({ ip })),
        ports: [{ name: 'https', port: reconcilePorts ? 6443 : cur.subsets![0]!.ports![0]!.port, protocol: 'TCP' }],
      },
    ]);
  });
  it('several subsets (not its format) → remade as one', () => {
    const cur: Endpoints = {
      metadata: meta,
      subsets: [{ addresses: [{ ip: '10.0.0.1' }] }, { addresses: [{ ip: '10.0.0.9' }] }],
    };
    expect(desiredEndpoints(cur, ['10.0.0.1'], 6443, false)?.subsets).toEqual([
      { addresses: [{ ip: '10.0.0.1' }], ports: [{ name: 'https', port: 6443, protocol: 'TCP' }] },
    ]);
  });
});

describe('its EndpointSlice', () => {
  const slice = (
    name: string,
    addressType: string,
    ips: string[],
    labels: Record<string, string> = { 'kubernetes.io/service-name': 'kubernetes' },
  ): EndpointSlice => ({
    metadata: { ...meta, name, labels },
    addressType,
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
    ports: [{ name: 'https', port: 6443, protocol: 'TCP' }],
  });

  it("absent → IPv4 slice named kubernetes, each address ready, labelled with the service name only (not mirrored, not the slice controller's)", () => {
    expect(desiredSlice(undefined, ['10.0.0.2', '10.0.0.1'], 6443, false)).toEqual({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'kubernetes', namespace: 'default', labels: { 'kubernetes.io/service-name': 'kubernetes' } },
      addressType: 'IPv4',
      endpoints: [
        { addresses: ['10.0.0.1'], conditions: { ready: true } },
        { addresses: ['10.0.0.2'], conditions: { ready: true } },
      ],
      ports: [{ name: 'https', port: 6443, protocol: 'TCP' }],
    });
  });
  it('up to date → no write; an address gone or a label changed → rewritten keeping its metadata', () => {
    expect(desiredSlice(slice('kubernetes', 'IPv4', ['10.0.0.1']), ['10.0.0.1'], 6443, true)).toBeUndefined();
    expect(
      desiredSlice(slice('kubernetes', 'IPv4', ['10.0.0.1', '10.0.0.2']), ['10.0.0.1'], 6443, false)?.endpoints,
    ).toEqual([{ addresses: ['10.0.0.1'], conditions: { ready: true } }]);
    expect(
      desiredSlice(
        slice('kubernetes', 'IPv4', ['10.0.0.1'], { 'kubernetes.io/service-name': 'kubernetes', a: 'b' }),
        ['10.0.0.1'],
        6443,
        false,
      )?.metadata,
    ).toEqual({
      ...meta,
      labels: { 'kubernetes.io/service-name': 'kubernetes' },
    });
  });
  it("slices of the service other than its one IPv4 slice are strays; other services' are not", () => {
    const own = slice('kubernetes', 'IPv4', ['10.0.0.1']);
    const v6 = slice('kubernetes-v6', 'IPv6', ['fd00::1']);
    const other = slice('web-abc', 'IPv4', ['10.0.0.5'], { 'kubernetes.io/service-name': 'web' });
    expect(strayKubernetesSlices([own, v6, other])).toEqual([v6]);
  });
});

describe('advertise address (kube-apiserver --advertise-address defaulting)', () => {
  it.each([
    {
      name: 'the flag wins',
      o: { flag: '192.0.2.9', bindAddress: '0.0.0.0', hostAddress: '192.0.2.1' },
      want: '192.0.2.9',
    },
    { name: 'a specific bind address', o: { bindAddress: '192.0.2.5', hostAddress: '192.0.2.1' }, want: '192.0.2.5' },
    {
      name: 'unspecified bind → the host address',
      o: { bindAddress: '0.0.0.0', hostAddress: '192.0.2.1' },
      want: '192.0.2.1',
    },
    {
      name: 'loopback bind → the host address, never loopback when there is one',
      o: { bindAddress: '127.0.0.1', hostAddress: '192.0.2.1' },
      want: '192.0.2.1',
    },
    {
      name: 'loopback bind, no host address → that loopback address',
      o: { bindAddress: '127.0.0.2' },
      want: '127.0.0.2',
    },
    { name: 'unspecified bind, no host address → 127.0.0.1', o: { bindAddress: '::' }, want: '127.0.0.1' },
  ])('$name', ({ o, want }) => expect(advertiseAddress(o)).toBe(want));
});
