/** core/v1 Endpoints and discovery.k8s.io/v1 EndpointSlice: validation at Stowage's depth, kubectl's columns. */
import type { FieldCause } from '../../util/errors.js';
import { listAt, strAt } from './corehelpers.js';
import { baseResourceDef } from './common.js';
import { invalid, notSupported, required, tooLong } from './fielderrors.js';
import { nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from './names.js';
import { age, ageColumn, column, fieldDoc, nameColumn } from './printing.js';
import { isIpAddress } from './serviceip.js';
import type { KubeObject } from './types.js';

const PORT_RANGE_MSG = 'must be between 1 and 65535, inclusive';
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'] as const;
export const ADDRESS_TYPES = ['FQDN', 'IPv4', 'IPv6'] as const;
/** kubectl shows at most this many endpoints, then `+ N more...` (formatEndpoints / formatEndpointSlice). */
const MAX_SHOWN = 3;

function validatePort(p: Record<string, unknown>, at: string, out: FieldCause[]): void {
  const port = p.port;
  if (port !== undefined && port !== null && (typeof port !== 'number' || port < 1 || port > 65535))
    out.push(invalid(`${at}.port`, port as number, PORT_RANGE_MSG));
  const protocol = p.protocol ?? 'TCP';
  if (!PROTOCOLS.includes(protocol as (typeof PROTOCOLS)[number]))
    out.push(notSupported(`${at}.protocol`, String(protocol), PROTOCOLS));
}

function defaultProtocols(ports: Array<Record<string, unknown>>): void {
  for (const p of ports) p.protocol ??= 'TCP';
}

function validateSubsets(o: KubeObject): FieldCause[] {
  const out: FieldCause[] = [];
  listAt(o, 'subsets').forEach((s, i) => {
    const at = `subsets[${i}]`;
    for (const key of ['addresses', 'notReadyAddresses'] as const) {
      listAt(s, key).forEach((a, j) => {
        const ip = strAt(a, 'ip');
        if (!isIpAddress(ip))
          out.push(
            invalid(`${at}.${key}[${j}].ip`, ip, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'),
          );
      });
    }
    const ports = listAt(s, 'ports');
    if ((listAt(s, 'addresses').length || listAt(s, 'notReadyAddresses').length) && ports.length === 0)
      out.push(required(`${at}.ports`));
    ports.forEach((p, j) => validatePort(p, `${at}.ports[${j}]`, out));
  });
  return out;
}

/** kubectl's ENDPOINTS cell of an Endpoints: `ip:port` pairs, three at most, then `+ N more...`. */
function endpointsCell(o: KubeObject): string {
  const list: string[] = [];
  let total = 0;
  for (const s of listAt(o, 'subsets')) {
    const ports = listAt(s, 'ports');
    for (const a of listAt(s, 'addresses')) {
      if (ports.length === 0) {
        total++;
        if (list.length < MAX_SHOWN) list.push(strAt(a, 'ip'));
        continue;
      }
      for (const p of ports) {
        total++;
        if (list.length < MAX_SHOWN) list.push(`${strAt(a, 'ip')}:${String(p.port)}`);
      }
    }
  }
  if (total === 0) return '<none>';
  const more = total - list.length;
  return more > 0 ? `${list.join(',')} + ${more} more...` : list.join(',');
}

export const endpointsResource = baseResourceDef({
  group: '',
  version: 'v1',
  kind: 'Endpoints',
  plural: 'endpoints',
  namespaced: true,
  hasStatus: false,
  shortNames: ['ep'],
  columns: [nameColumn(), column('Endpoints', fieldDoc('', 'Endpoints', ['subsets'])), ageColumn()],
  row: (o, now) => [o.metadata.name ?? '', endpointsCell(o), age(o, now)],
  defaults: (o) => {
    for (const s of listAt(o, 'subsets')) defaultProtocols(listAt(s, 'ports'));
  },
  validateCreate: (o) => [
    ...validateObjectMeta(o.metadata, { namespaced: true, nameFn: nameIsDNSSubdomain }),
    ...validateSubsets(o),
  ],
  validateUpdate: (o, old) => [...validateObjectMetaUpdate(o.metadata, old.metadata), ...validateSubsets(o)],
});

function validateSlice(o: KubeObject): FieldCause[] {
  const out: FieldCause[] = [];
  const type = o.addressType;
  if (!ADDRESS_TYPES.includes(type as (typeof ADDRESS_TYPES)[number]))
    out.push(type ? notSupported('addressType', String(type), ADDRESS_TYPES) : required('addressType'));
  const endpoints = listAt(o, 'endpoints');
  if (endpoints.length > 1000)
    out.push({
      type: 'FieldValueTooMany',
      field: 'endpoints',
      message: `Too many: ${endpoints.length}: must have at most 1000 items`,
    });
  endpoints.forEach((e, i) => {
    const addrs = Array.isArray(e.addresses) ? e.addresses : [];
    if (addrs.length === 0) out.push(required(`endpoints[${i}].addresses`, 'must contain at least 1 address'));
    if (addrs.length > 100) out.push(tooLong(`endpoints[${i}].addresses`, 100));
    addrs.forEach((a, j) => {
      if ((type === 'IPv4' || type === 'IPv6') && (typeof a !== 'string' || !isIpAddress(a))) {
        out.push(invalid(`endpoints[${i}].addresses[${j}]`, String(a), 'must be a valid IP address'));
      }
    });
  });
  listAt(o, 'ports').forEach((p, j) => validatePort(p, `ports[${j}]`, out));
  return out;
}

/** kubectl's PORTS cell of a slice: the ports joined, `<unset>` for a nil port. */
function slicePortsCell(o: KubeObject): string {
  const ports = listAt(o, 'ports');
  if (ports.length === 0) return '<unset>';
  return ports.map((p) => (typeof p.port === 'number' ? String(p.port) : '<unset>')).join(',');
}

function sliceEndpointsCell(o: KubeObject): string {
  const addrs = listAt(o, 'endpoints').flatMap((e) => (Array.isArray(e.addresses) ? e.addresses.map(String) : []));
  if (addrs.length === 0) return '<unset>';
  const shown = addrs.slice(0, MAX_SHOWN);
  return addrs.length > MAX_SHOWN ? `${shown.join(',')} + ${addrs.length - MAX_SHOWN} more...` : shown.join(',');
}

export const endpointSliceResource = baseResourceDef({
  group: 'discovery.k8s.io',
  version: 'v1',
  kind: 'EndpointSlice',
  plural: 'endpointslices',
  namespaced: true,
  hasStatus: false,
  columns: [
    nameColumn(),
    column('AddressType', fieldDoc('discovery.k8s.io', 'EndpointSlice', ['addressType'])),
    column('Ports', fieldDoc('discovery.k8s.io', 'EndpointSlice', ['ports'])),
    column('Endpoints', fieldDoc('discovery.k8s.io', 'EndpointSlice', ['endpoints'])),
    ageColumn(),
  ],
  row: (o, now) => [
    o.metadata.name ?? '',
    strAt(o, 'addressType'),
    slicePortsCell(o),
    sliceEndpointsCell(o),
    age(o, now),
  ],
  defaults: (o) => defaultProtocols(listAt(o, 'ports')),
  validateCreate: (o) => [
    ...validateObjectMeta(o.metadata, { namespaced: true, nameFn: nameIsDNSSubdomain }),
    ...validateSlice(o),
  ],
  validateUpdate: (o, old) => {
    const out = [...validateObjectMetaUpdate(o.metadata, old.metadata), ...validateSlice(o)];
    if (o.addressType !== old.addressType)
      out.push(invalid('addressType', String(o.addressType), 'field is immutable'));
    return out;
  },
});
