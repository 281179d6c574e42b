import type { FieldCause } from '../../util/errors.js';
import { patchMetaFor, schemaFor } from '../openapi/schemas.js';
import { objectAt, strAt } from './corehelpers.js';
import { invalid, required } from './fielderrors.js';
import { nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from './names.js';
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

function validateEvent(obj: KubeObject): FieldCause[] {
  const out: FieldCause[] = [];
  const io = involved(obj);
  if (!io) return [required('involvedObject')];
  const ns = obj.metadata.namespace ?? '';
  const ioNs = strAt(io, 'namespace');
  // Events about cluster-scoped objects live in "default" (or no namespace); others in the object's.
  if (ioNs === '' ? ns !== '' && ns !== 'default' : ioNs !== ns) {
    out.push(invalid('involvedObject.namespace', ioNs, 'does not match event.namespace'));
  }
  return out;
}

export const eventResource: ResourceDef = {
  group: '',
  version: 'v1',
  kind: 'Event',
  listKind: 'EventList',
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
  validateCreate(obj) {
    return [...validateObjectMeta(obj.metadata, { namespaced: true, nameFn: nameIsDNSSubdomain }), ...validateEvent(obj)];
  },
  validateUpdate(obj, old) {
    return [...validateObjectMetaUpdate(obj.metadata, old.metadata), ...validateEvent(obj)];
  },
  validateStatusUpdate() {
    return [];
  },
  patchMeta: patchMetaFor('', 'v1', 'Event'),
};
