import type { FieldCause } from '../../util/errors.js';
import { patchMetaFor, schemaFor } from '../openapi/schemas.js';
import { objectAt, strAt } from './corehelpers.js';
import { invalid, required } from './fielderrors.js';
import { isDNS1123Subdomain, isQualifiedName } from './names.js';
import { column, fieldDoc, nameColumn, timestampSince } from './printing.js';
import type { KubeObject, ResourceDef } from './types.js';

const involved = (o: KubeObject) => objectAt(o, 'involvedObject');
const doc = (path: string[]): string => fieldDoc('', 'Event', path);

/** `component, host` of the legacy source, falling back to the reporting controller/instance. */
function eventSource(o: KubeObject): string {
  const source = objectAt(o, 'source');
  const component = strAt(source, 'component') || strAt(o, 'reportingComponent');
  const instance = strAt(source, 'host') || strAt(o, 'reportingInstance');
  return instance ? `${component}, ${instance}` : component;
}

/** kube's event printer: LAST SEEN falls back to FIRST SEEN, which falls back to eventTime; series win. */
function eventTimes(o: KubeObject, now: number): { first: string; last: string; count: number } {
  const firstTs = strAt(o, 'firstTimestamp');
  const first = firstTs ? timestampSince(firstTs, now) : timestampSince(o.eventTime, now);
  const lastTs = strAt(o, 'lastTimestamp');
  let last = lastTs ? timestampSince(lastTs, now) : first;
  let count = typeof o.count === 'number' ? o.count : 0;
  const series = objectAt(o, 'series');
  if (series) {
    last = timestampSince(series.lastObservedTime, now);
    count = typeof series.count === 'number' ? series.count : 0;
  } else if (count === 0) {
    count = 1; // singleton events of the new API carry no count
  }
  return { first, last, count };
}

// Limits of the new-style (eventTime) fields, from the events API.
const REPORTING_INSTANCE_MAX = 128;
const ACTION_MAX = 128;
const REASON_MAX = 128;
const NOTE_MAX = 1024;

/** Name rule every object name meets (the name is a URL path segment). */
function pathSegmentName(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  for (const bad of ['/', '%']) if (name.includes(bad)) return [`may not contain '${bad}'`];
  return [];
}

/**
 * kube-apiserver's legacy core/v1 event validation: no ObjectMeta rules (old clients wrote any
 * names), the involved object's namespace must match, and events written with eventTime (the new
 * API's shape) need reportingComponent, reportingInstance, action and reason.
 */
function validateEvent(obj: KubeObject): FieldCause[] {
  const out: FieldCause[] = [];
  const name = obj.metadata.name ?? '';
  if (!name) out.push(required('metadata.name', 'name or generateName is required'));
  for (const m of pathSegmentName(name)) out.push(invalid('metadata.name', name, m));
  const ns = obj.metadata.namespace ?? '';
  const ioNs = strAt(involved(obj), 'namespace');
  const eventTime = strAt(obj, 'eventTime');
  if (!eventTime) {
    // Events about cluster-scoped objects live in "default" (or no namespace); others in the object's.
    if (ioNs === '' ? ns !== '' && ns !== 'default' : ioNs !== ns) {
      out.push(invalid('involvedObject.namespace', ioNs, 'does not match event.namespace'));
    }
  } else {
    if (ioNs === '' && ns !== 'default' && ns !== 'kube-system') {
      out.push(invalid('involvedObject.namespace', ioNs, 'does not match event.namespace'));
    }
    const controller = strAt(obj, 'reportingComponent');
    if (!controller) out.push(required('reportingComponent'));
    else for (const m of isQualifiedName(controller)) out.push(invalid('reportingComponent', controller, m));
    const instance = strAt(obj, 'reportingInstance');
    if (!instance) out.push(required('reportingInstance'));
    else if (instance.length > REPORTING_INSTANCE_MAX)
      out.push(invalid('reportingInstance', '', `can have at most ${REPORTING_INSTANCE_MAX} characters`));
    const action = strAt(obj, 'action');
    if (!action) out.push(required('action'));
    else if (action.length > ACTION_MAX) out.push(invalid('action', '', `can have at most ${ACTION_MAX} characters`));
    const reason = strAt(obj, 'reason');
    if (!reason) out.push(required('reason'));
    else if (reason.length > REASON_MAX) out.push(invalid('reason', '', `can have at most ${REASON_MAX} characters`));
    if (strAt(obj, 'message').length > NOTE_MAX)
      out.push(invalid('message', '', `can have at most ${NOTE_MAX} characters`));
  }
  for (const m of isDNS1123Subdomain(ns)) out.push(invalid('namespace', ns, m));
  return out;
}

export const eventResource: ResourceDef = {
  group: '',
  version: 'v1',
  kind: 'Event',
  listKind: 'EventList',
  // Events may still be written in a terminating namespace (they report its cleanup).
  creatableInTerminatingNamespace: true,
  plural: 'events',
  singular: 'event',
  namespaced: true,
  shortNames: ['ev'],
  categories: [],
  hasStatus: false,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  schema: schemaFor('', 'v1', 'Event'),
  fieldSelectors: {
    'involvedObject.kind': (o) => strAt(involved(o), 'kind'),
    'involvedObject.namespace': (o) => strAt(involved(o), 'namespace'),
    'involvedObject.name': (o) => strAt(involved(o), 'name'),
    'involvedObject.uid': (o) => strAt(involved(o), 'uid'),
    'involvedObject.apiVersion': (o) => strAt(involved(o), 'apiVersion'),
    'involvedObject.resourceVersion': (o) => strAt(involved(o), 'resourceVersion'),
    'involvedObject.fieldPath': (o) => strAt(involved(o), 'fieldPath'),
    reason: (o) => strAt(o, 'reason'),
    reportingComponent: (o) => strAt(o, 'reportingComponent'),
    source: (o) => strAt(objectAt(o, 'source'), 'component'),
    type: (o) => strAt(o, 'type'),
  },
  columns: [
    column('Last Seen', doc(['lastTimestamp'])),
    column('Type', doc(['type'])),
    column('Reason', doc(['reason'])),
    column('Object', doc(['involvedObject'])),
    column('Subobject', doc(['involvedObject', 'fieldPath']), { wide: true }),
    column('Source', doc(['source']), { wide: true }),
    column('Message', doc(['message'])),
    column('First Seen', doc(['firstTimestamp']), { wide: true }),
    column('Count', doc(['count']), { wide: true }),
    nameColumn({ wide: true }),
  ],
  row(o, now) {
    const t = eventTimes(o, now);
    const io = involved(o);
    const kind = strAt(io, 'kind').toLowerCase();
    const name = strAt(io, 'name');
    return [
      t.last,
      strAt(o, 'type'),
      strAt(o, 'reason'),
      name ? `${kind}/${name}` : kind,
      strAt(io, 'fieldPath'),
      eventSource(o),
      strAt(o, 'message').trim(),
      t.first,
      t.count,
      o.metadata.name ?? '',
    ];
  },

  // Kubernetes does not default first/lastTimestamp: the recorder sets them.
  prepareForCreate() {},
  prepareForUpdate() {},
  prepareForStatusUpdate() {},
  // core/v1 events get the legacy checks only, on create and update alike (kube skips ObjectMeta
  // validation for them for backwards compatibility); identity fields are guarded by the registry.
  validateCreate(obj) {
    return validateEvent(obj);
  },
  validateUpdate(obj) {
    return validateEvent(obj);
  },
  validateStatusUpdate() {
    return [];
  },
  patchMeta: patchMetaFor('', 'v1', 'Event'),
};
