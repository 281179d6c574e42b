/**
 * core/v1 Service: defaults, ClusterIP and node-port allocation, validation as kube's
 * ValidateService, kubectl's columns. A Service only names pods here: nothing proxies its address
 * (pods share the node's network); the endpoints controller lists the pods it selects.
 */
import type { FieldCause } from '../../util/errors.js';
import { listAt, objectAt, strAt } from './corehelpers.js';
import { baseResourceDef } from './common.js';
import { duplicate, forbidden, invalid, notSupported, required, type RenderedValue } from './fielderrors.js';
import {
  isDNS1123Label,
  isDNS1123Subdomain,
  nameIsDNSLabel,
  validateLabels,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './names.js';
import { age, ageColumn, column, fieldDoc, nameColumn } from './printing.js';
import {
  allocateClusterIp,
  allocateNodePort,
  cidrContains,
  DEFAULT_SERVICE_CIDR,
  isIpAddress,
  NODE_PORT_RANGE,
  parseCidr,
  type Ipv4Cidr,
} from './serviceip.js';
import type { AdmissionContext, KubeObject, ResourceDef } from './types.js';

type Obj = Record<string, unknown>;

export const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'] as const;
const SESSION_AFFINITIES = ['ClientIP', 'None'] as const;
const SERVICE_PROTOCOLS = ['SCTP', 'TCP', 'UDP'] as const;
const PORT_RANGE_MSG = 'must be between 1 and 65535, inclusive';
/** `clusterIP: None`: a headless Service, no address allocated. */
export const CLUSTER_IP_NONE = 'None';

const specOf = (o: KubeObject): Obj => (objectAt(o, 'spec') ?? (o.spec = {})) as Obj;
const typeOf = (spec: Obj): string => (typeof spec.type === 'string' && spec.type ? spec.type : 'ClusterIP');
const needsClusterIp = (spec: Obj): boolean => typeOf(spec) !== 'ExternalName';
const needsNodePorts = (spec: Obj): boolean => typeOf(spec) === 'NodePort' || typeOf(spec) === 'LoadBalancer';

/** SetDefaults_Service (v1.30). */
function defaults(o: KubeObject): void {
  const spec = specOf(o);
  spec.type ??= 'ClusterIP';
  spec.sessionAffinity ??= 'None';
  for (const p of listAt(spec, 'ports')) {
    p.protocol ??= 'TCP';
    if (p.targetPort === undefined || p.targetPort === null || p.targetPort === 0 || p.targetPort === '')
      p.targetPort = p.port;
  }
  if (needsNodePorts(spec)) spec.externalTrafficPolicy ??= 'Cluster';
  if (needsClusterIp(spec)) spec.internalTrafficPolicy ??= 'Cluster';
  // clusterIPs mirrors clusterIP (kube's dual-stack fields).
  if (
    typeof spec.clusterIP === 'string' &&
    spec.clusterIP &&
    (!Array.isArray(spec.clusterIPs) || spec.clusterIPs.length === 0)
  )
    spec.clusterIPs = [spec.clusterIP];
  if (!spec.clusterIP && Array.isArray(spec.clusterIPs) && typeof spec.clusterIPs[0] === 'string')
    spec.clusterIP = spec.clusterIPs[0];
}

function usedAddresses(ctx: AdmissionContext, self?: KubeObject): { ips: Set<string>; ports: Set<number> } {
  const ips = new Set<string>();
  const ports = new Set<number>();
  for (const s of ctx.list('Service')) {
    if (self && s.metadata.uid === self.metadata.uid) continue;
    const spec = objectAt(s, 'spec') ?? {};
    if (typeof spec.clusterIP === 'string') ips.add(spec.clusterIP);
    for (const p of listAt(spec, 'ports')) if (typeof p.nodePort === 'number') ports.add(p.nodePort);
  }
  return { ips, ports };
}

/** Allocates what the spec leaves empty: a ClusterIP (unless headless/ExternalName) and node ports. */
function allocate(o: KubeObject, cidr: Ipv4Cidr, ctx: AdmissionContext): void {
  const spec = specOf(o);
  const { ips, ports } = usedAddresses(ctx, o);
  if (needsClusterIp(spec)) {
    if (!spec.clusterIP) {
      const ip = allocateClusterIp(cidr, ips);
      if (ip) {
        spec.clusterIP = ip;
        spec.clusterIPs = [ip];
      }
    }
    if (spec.clusterIP !== CLUSTER_IP_NONE || spec.selector) {
      spec.ipFamilies ??= ['IPv4'];
      spec.ipFamilyPolicy ??= 'SingleStack';
    }
  }
  if (needsNodePorts(spec)) {
    const taken = new Set(ports);
    for (const p of listAt(spec, 'ports'))
      if (typeof p.nodePort === 'number' && p.nodePort !== 0) taken.add(p.nodePort);
    for (const p of listAt(spec, 'ports')) {
      if (p.nodePort) continue;
      const port = allocateNodePort(taken);
      if (port !== undefined) {
        p.nodePort = port;
        taken.add(port);
      }
    }
  }
}

/** validation.IsValidPortName (IANA_SVC_NAME). */
function portNameErrors(name: string): string[] {
  const errs: string[] = [];
  if (name.length > 15) errs.push('must be no more than 15 characters');
  if (!/^[-a-z0-9]+$/.test(name)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (name.includes('--')) errs.push('must not contain consecutive hyphens');
  if (!/[a-z]/.test(name)) errs.push('must contain at least one letter (a-z)');
  if (name.startsWith('-') || name.endsWith('-')) errs.push('must not begin or end with a hyphen');
  return errs;
}

const goStrings = (xs: readonly unknown[]): RenderedValue => ({
  rendered: `[]string{${xs.map((x) => JSON.stringify(String(x))).join(', ')}}`,
});

function validatePorts(spec: Obj, out: FieldCause[]): void {
  const ports = listAt(spec, 'ports');
  const names = new Set<string>();
  const keys = new Set<string>();
  ports.forEach((p, i) => {
    const at = `spec.ports[${i}]`;
    const name = strAt(p, 'name');
    if (ports.length > 1 && !name) out.push(required(`${at}.name`));
    if (name) {
      for (const m of isDNS1123Label(name)) out.push(invalid(`${at}.name`, name, m));
      if (names.has(name)) out.push(duplicate(`${at}.name`, name));
      names.add(name);
    }
    const port = p.port;
    if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535)
      out.push(invalid(`${at}.port`, port as number, PORT_RANGE_MSG));
    const protocol = p.protocol;
    if (!SERVICE_PROTOCOLS.includes(protocol as (typeof SERVICE_PROTOCOLS)[number]))
      out.push(notSupported(`${at}.protocol`, String(protocol ?? ''), SERVICE_PROTOCOLS));
    const key = `${String(port)}/${String(protocol)}`;
    if (keys.has(key))
      out.push(
        duplicate(`spec.ports[${i}]`, {
          rendered: `core.ServicePort{Name:${JSON.stringify(name)}, Protocol:${JSON.stringify(protocol)}, Port:${String(port)}}`,
        }),
      );
    keys.add(key);
    const target = p.targetPort;
    if (typeof target === 'number') {
      if (!Number.isInteger(target) || target < 1 || target > 65535)
        out.push(invalid(`${at}.targetPort`, target, PORT_RANGE_MSG));
    } else if (typeof target === 'string') {
      for (const m of portNameErrors(target)) out.push(invalid(`${at}.targetPort`, target, m));
    }
    const nodePort = p.nodePort;
    if (nodePort !== undefined && nodePort !== 0) {
      if (!needsNodePorts(spec))
        out.push(forbidden(`${at}.nodePort`, `may not be used when \`type\` is '${typeOf(spec)}'`));
      else if (typeof nodePort !== 'number' || nodePort < 1 || nodePort > 65535)
        out.push(invalid(`${at}.nodePort`, nodePort as number, PORT_RANGE_MSG));
    }
  });
}

/** ValidateService at Stowage's depth: type, ports, selector, ClusterIP and external name rules. */
function validateSpec(o: KubeObject): FieldCause[] {
  const spec = specOf(o);
  const out: FieldCause[] = [];
  const type = typeOf(spec);
  if (!SERVICE_TYPES.includes(type as (typeof SERVICE_TYPES)[number]))
    out.push(notSupported('spec.type', type, SERVICE_TYPES));
  const headless = spec.clusterIP === CLUSTER_IP_NONE;
  if (listAt(spec, 'ports').length === 0 && !headless && type !== 'ExternalName') out.push(required('spec.ports'));
  validatePorts(spec, out);
  if (spec.selector !== undefined && spec.selector !== null)
    out.push(...validateLabels(spec.selector as Record<string, string>, 'spec.selector'));
  const affinity = spec.sessionAffinity;
  if (!SESSION_AFFINITIES.includes(affinity as (typeof SESSION_AFFINITIES)[number]))
    out.push(notSupported('spec.sessionAffinity', String(affinity ?? ''), SESSION_AFFINITIES));
  if (type === 'ExternalName') {
    const name = strAt(spec, 'externalName');
    if (!name) out.push(required('spec.externalName'));
    else for (const m of isDNS1123Subdomain(name.replace(/\.$/, ''))) out.push(invalid('spec.externalName', name, m));
    if (spec.clusterIP) out.push(forbidden('spec.clusterIP', 'may not be set for ExternalName services'));
  } else {
    const ip = spec.clusterIP;
    if (typeof ip === 'string' && ip && ip !== CLUSTER_IP_NONE && !isIpAddress(ip)) {
      out.push(invalid('spec.clusterIPs[0]', ip, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'));
    }
    if (headless && type === 'NodePort')
      out.push(invalid('spec.clusterIPs[0]', ip as string, "may not be set to 'None' for NodePort services"));
    if (headless && type === 'LoadBalancer')
      out.push(invalid('spec.clusterIPs[0]', ip as string, "may not be set to 'None' for LoadBalancer services"));
  }
  return out;
}

/** The allocator's refusals of a requested ClusterIP or node port (kube answers them as Invalid too). */
function validateAllocation(
  o: KubeObject,
  old: KubeObject | undefined,
  cidr: Ipv4Cidr,
  ctx: AdmissionContext,
): FieldCause[] {
  const spec = specOf(o);
  const oldSpec = old ? (objectAt(old, 'spec') ?? {}) : {};
  const out: FieldCause[] = [];
  const { ips, ports } = usedAddresses(ctx, o);
  const ip = spec.clusterIP;
  if (
    needsClusterIp(spec) &&
    typeof ip === 'string' &&
    ip &&
    ip !== CLUSTER_IP_NONE &&
    isIpAddress(ip) &&
    ip !== oldSpec.clusterIP
  ) {
    if (!cidrContains(cidr, ip)) {
      out.push(
        invalid(
          'spec.clusterIPs',
          goStrings([ip]),
          `failed to allocate IP ${ip}: provided IP is not in the valid range. The range of valid IPs is ${cidr.text}`,
        ),
      );
    } else if (ips.has(ip)) {
      out.push(
        invalid('spec.clusterIPs', goStrings([ip]), `failed to allocate IP ${ip}: provided IP is already allocated`),
      );
    }
  }
  if (needsClusterIp(spec) && !spec.clusterIP)
    out.push(invalid('spec.clusterIPs', goStrings([]), 'failed to allocate a serviceIP: range is full'));
  const oldPorts = new Set(listAt(oldSpec, 'ports').map((p) => p.nodePort));
  listAt(spec, 'ports').forEach((p, i) => {
    const np = p.nodePort;
    if (typeof np !== 'number' || np === 0 || oldPorts.has(np) || !needsNodePorts(spec)) return;
    if (np < NODE_PORT_RANGE.min || np > NODE_PORT_RANGE.max) {
      out.push(
        invalid(
          `spec.ports[${i}].nodePort`,
          np,
          `provided port is not in the valid range. The range of valid ports is ${NODE_PORT_RANGE.min}-${NODE_PORT_RANGE.max}`,
        ),
      );
    } else if (ports.has(np)) out.push(invalid(`spec.ports[${i}].nodePort`, np, 'provided port is already allocated'));
  });
  return out;
}

/** ValidateServiceUpdate: an allocated ClusterIP may not change (nor be dropped) while the Service keeps one. */
function validateUpdate(o: KubeObject, old: KubeObject): FieldCause[] {
  const spec = specOf(o);
  const oldSpec = objectAt(old, 'spec') ?? {};
  if (!needsClusterIp(spec) || !needsClusterIp(oldSpec)) return [];
  if (oldSpec.clusterIP && spec.clusterIP !== oldSpec.clusterIP)
    return [invalid('spec.clusterIPs[0]', String(spec.clusterIP ?? ''), 'may not change once set')];
  return [];
}

/** On update an omitted ClusterIP or node port keeps the allocated one (kube's patchAllocatedValues). */
function keepAllocated(o: KubeObject, old: KubeObject): void {
  const spec = specOf(o);
  const oldSpec = objectAt(old, 'spec') ?? {};
  if (needsClusterIp(spec) && needsClusterIp(oldSpec) && !spec.clusterIP && oldSpec.clusterIP) {
    spec.clusterIP = oldSpec.clusterIP;
    spec.clusterIPs = structuredClone(oldSpec.clusterIPs ?? [oldSpec.clusterIP]);
  }
  if (needsClusterIp(spec) && needsClusterIp(oldSpec)) {
    spec.ipFamilies ??= structuredClone(oldSpec.ipFamilies);
    spec.ipFamilyPolicy ??= oldSpec.ipFamilyPolicy;
  }
  if (!needsClusterIp(spec)) {
    // ExternalName releases its address.
    delete spec.clusterIP;
    delete spec.clusterIPs;
  }
  if (needsNodePorts(spec) && needsNodePorts(oldSpec)) {
    const oldPorts = listAt(oldSpec, 'ports');
    for (const p of listAt(spec, 'ports')) {
      if (p.nodePort) continue;
      const same = oldPorts.find((q) => q.port === p.port && q.protocol === p.protocol);
      if (same?.nodePort) p.nodePort = same.nodePort;
    }
  }
}

/** kubectl's PORT(S) cell: `80/TCP`, `80:30080/TCP`, joined by commas; `<none>` without ports. */
function portsCell(spec: Obj): string {
  const ports = listAt(spec, 'ports');
  if (ports.length === 0) return '<none>';
  return ports
    .map((p) =>
      p.nodePort
        ? `${String(p.port)}:${String(p.nodePort)}/${String(p.protocol)}`
        : `${String(p.port)}/${String(p.protocol)}`,
    )
    .join(',');
}

/** kubectl's EXTERNAL-IP cell (getServiceExternalIP). */
function externalIpCell(o: KubeObject): string {
  const spec = objectAt(o, 'spec') ?? {};
  const external = Array.isArray(spec.externalIPs) ? spec.externalIPs.map(String) : [];
  switch (typeOf(spec)) {
    case 'ClusterIP':
    case 'NodePort':
      return external.length ? external.join(',') : '<none>';
    case 'ExternalName':
      return strAt(spec, 'externalName');
    case 'LoadBalancer': {
      const ingress = listAt(objectAt(objectAt(o, 'status'), 'loadBalancer'), 'ingress').map(
        (i) => strAt(i, 'ip') || strAt(i, 'hostname'),
      );
      const all = [...ingress, ...external].filter(Boolean);
      return all.length ? all.join(',') : '<pending>';
    }
    default:
      return '<unknown>';
  }
}

function selectorCell(spec: Obj): string {
  const sel = objectAt(spec, 'selector');
  if (!sel || Object.keys(sel).length === 0) return '<none>';
  return Object.keys(sel)
    .sort()
    .map((k) => `${k}=${String(sel[k])}`)
    .join(',');
}

/** The Service kind allocating ClusterIPs from `serviceCidr` (kube-apiserver's --service-cluster-ip-range). */
export function newServiceResource(o: { serviceCidr?: string } = {}): ResourceDef {
  const cidr = parseCidr(o.serviceCidr ?? DEFAULT_SERVICE_CIDR);
  return baseResourceDef({
    group: '',
    version: 'v1',
    kind: 'Service',
    plural: 'services',
    namespaced: true,
    hasStatus: true,
    shortNames: ['svc'],
    categories: ['all'],
    columns: [
      nameColumn(),
      column('Type', fieldDoc('', 'Service', ['spec', 'type'])),
      column('Cluster-IP', fieldDoc('', 'Service', ['spec', 'clusterIP'])),
      column('External-IP', fieldDoc('', 'Service', ['spec', 'externalIPs'])),
      column('Port(s)', 'The port(s) exposed by the service.'),
      ageColumn(),
      column('Selector', fieldDoc('', 'Service', ['spec', 'selector']), { wide: true }),
    ],
    row: (s, now) => {
      const spec = objectAt(s, 'spec') ?? {};
      return [
        s.metadata.name ?? '',
        typeOf(spec),
        strAt(spec, 'clusterIP') || '<none>',
        externalIpCell(s),
        portsCell(spec),
        age(s, now),
        selectorCell(spec),
      ];
    },
    defaults,
    prepareForCreate(s, ctx) {
      s.status = { loadBalancer: {} };
      allocate(s, cidr, ctx);
    },
    prepareForUpdate(s, old, ctx) {
      keepAllocated(s, old);
      allocate(s, cidr, ctx);
    },
    validateCreate: (s, ctx) => [
      ...validateObjectMeta(s.metadata, { namespaced: true, nameFn: nameIsDNSLabel }),
      ...validateSpec(s),
      ...validateAllocation(s, undefined, cidr, ctx),
    ],
    validateUpdate: (s, old, ctx) => [
      ...validateObjectMetaUpdate(s.metadata, old.metadata),
      ...validateSpec(s),
      ...validateUpdate(s, old),
      ...validateAllocation(s, old, cidr, ctx),
    ],
    validateStatusUpdate: (s, old) => validateObjectMetaUpdate(s.metadata, old.metadata),
  });
}

export const serviceResource = newServiceResource();
