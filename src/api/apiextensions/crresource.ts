/**
 * The ResourceDef of one served version of a CustomResourceDefinition: what the generic registry,
 * handlers, watch cache, field manager and authorizers need to serve custom resources exactly as
 * they serve built-in kinds (apiextensions-apiserver's customresource_handler builds the same per
 * version: a strategy, a status and scale strategy, a table convertor, a schema).
 */
import type { FieldCause } from '../../util/errors.js';
import { definitionNode, GoDecodeError, runCheck } from '../decode/typed.js';
import { DEFAULT_VERBS, humanDuration, keepAllButStatus, keepOldStatus } from '../resources/common.js';
import { jsonEqual as deepEqual } from '../../util/jsonequal.js';
import { nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from '../resources/names.js';
import { ageColumn, nameColumn } from '../resources/printing.js';
import type { KubeObject, ResourceDef, ScaleSubresource, TableColumn } from '../resources/types.js';
import { badRequest } from '../status.js';
import { crObjectSchema } from './crschema.js';
import { evalJsonPath } from './jsonpath.js';
import { applyDefaults } from './schema/defaulting.js';
import type { JSONSchemaProps } from './schema/types.js';
import { validateCustomResource } from './schema/validate.js';
import type { CRD, CRDVersion, PrinterColumn } from './types.js';

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/** A printer column's cell: the JSONPath's values (several joined by ','), dates as ages. */
function cell(obj: KubeObject, c: PrinterColumn, now: number): unknown {
  let values: unknown[];
  try {
    values = evalJsonPath(obj, c.jsonPath);
  } catch {
    return null;
  }
  if (values.length === 0) return null;
  if (c.type === 'date') {
    const t = typeof values[0] === 'string' ? Date.parse(values[0]) : NaN;
    return Number.isNaN(t) ? null : humanDuration(now - t);
  }
  if (values.length === 1) {
    const v = values[0];
    if (c.type === 'integer' || c.type === 'number') return typeof v === 'number' ? v : null;
    if (c.type === 'boolean') return typeof v === 'boolean' ? v : null;
    return typeof v === 'object' ? JSON.stringify(v) : v;
  }
  return values.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(',');
}

/** kube's default columns when a version declares none: Name, then Age. */
function columnsOf(v: CRDVersion): TableColumn[] {
  const cols = v.additionalPrinterColumns ?? [];
  if (!cols.length) return [nameColumn(), ageColumn()];
  return [
    nameColumn(),
    ...cols.map((c) => ({
      name: c.name,
      type: (c.type as TableColumn['type']) ?? 'string',
      format: c.format ?? '',
      description: c.description ?? '',
      priority: c.priority ?? 0,
    })),
  ];
}

/** `.spec.replicas` → ['spec', 'replicas']. */
function dotted(path: string): string[] {
  return path.split('.').filter(Boolean);
}

function scaleOf(v: CRDVersion): ScaleSubresource | undefined {
  const s = v.subresources?.scale;
  if (!s) return undefined;
  return {
    type: 'scale',
    name: 'scale',
    specReplicasPath: dotted(s.specReplicasPath),
    statusReplicasPath: dotted(s.statusReplicasPath),
    // The Scale's status.selector is the string at labelSelectorPath (kube reads it as a string).
    selector: (obj) => {
      if (!s.labelSelectorPath) return '';
      const v0 = evalJsonPath(obj, s.labelSelectorPath)[0];
      return typeof v0 === 'string' ? v0 : '';
    },
  };
}

/** Typed decoding of a custom resource: only metadata has Go types (unstructured otherwise). */
function decodeCustom(obj: Record<string, unknown>, kind: string, version: string): void {
  if (obj.metadata === undefined || obj.metadata === null) return;
  try {
    runCheck(definitionNode(OBJECT_META).check, obj.metadata);
  } catch (e) {
    if (!(e instanceof GoDecodeError)) throw e;
    throw badRequest(`${kind} in version "${version}" cannot be handled as a ${kind}: ${e.message}`);
  }
}

/** The warning a deprecated version's answers carry (kube's default text when none is given). */
function deprecationWarnings(crd: CRD, v: CRDVersion): string[] {
  if (!v.deprecated) return [];
  return [v.deprecationWarning ?? `${crd.spec.group}/${v.name} ${crd.spec.names.kind} is deprecated`];
}

/**
 * Builds the ResourceDef of version `v` of an accepted CRD (names from status.acceptedNames).
 * `terminating` tells whether the CRD is being deleted now.
 */
export function customResourceDef(crd: CRD, v: CRDVersion, terminating: () => boolean = () => false): ResourceDef {
  const names = crd.status?.acceptedNames ?? crd.spec.names;
  const group = crd.spec.group;
  const kind = names.kind;
  const root: JSONSchemaProps = v.schema?.openAPIV3Schema ?? { type: 'object' };
  const gvk = { group, version: v.name, kind };
  const schema = crObjectSchema(root, gvk);
  const hasStatus = v.subresources?.status !== undefined;
  const namespaced = crd.spec.scope === 'Namespaced';
  const scale = scaleOf(v);
  const columns = columnsOf(v);
  const printer = v.additionalPrinterColumns ?? [];
  const apiVersion = `${group}/${v.name}`;
  const defaults = (o: KubeObject): void => applyDefaults(o, root);
  const validate = (o: KubeObject): FieldCause[] => validateCustomResource(o, root);
  const fieldSelectors: Record<string, (o: KubeObject) => string> = {};
  for (const f of v.selectableFields ?? []) {
    fieldSelectors[f.jsonPath.replace(/^\./, '')] = (o) => {
      const x = evalJsonPath(o, f.jsonPath)[0];
      return x === undefined || x === null ? '' : String(x);
    };
  }
  return {
    group,
    version: v.name,
    kind,
    listKind: names.listKind ?? `${kind}List`,
    plural: names.plural,
    singular: names.singular ?? kind.toLowerCase(),
    namespaced,
    shortNames: names.shortNames ?? [],
    categories: names.categories ?? [],
    hasStatus,
    verbs: DEFAULT_VERBS,
    schema,
    fieldSelectors,
    columns,
    row: (o, now) => [
      o.metadata.name ?? '',
      ...(printer.length ? printer.map((c) => cell(o, c, now)) : [cell(o, AGE, now)]),
    ],
    defaults,
    prepareForCreate(o) {
      // With a status subresource, status is written only through /status.
      if (hasStatus) delete o.status;
      defaults(o);
      o.metadata.generation = 1;
    },
    prepareForUpdate(o, old) {
      if (hasStatus) keepOldStatus(o, old);
      defaults(o);
      // Without a status subresource every change but metadata is a change of spec.
      if (!hasStatus && !deepEqual(o.status, old.status)) o.metadata.generation = (old.metadata.generation ?? 0) + 1;
    },
    prepareForStatusUpdate(o, old) {
      keepAllButStatus(o, old, { resetMeta: true });
      defaults(o);
    },
    validateCreate: (o) => [
      ...validateObjectMeta(o.metadata, { namespaced, nameFn: nameIsDNSSubdomain }),
      ...validate(o),
    ],
    validateUpdate: (o, old) => [...validateObjectMetaUpdate(o.metadata, old.metadata), ...validate(o)],
    validateStatusUpdate: (o, old) => [...validateObjectMetaUpdate(o.metadata, old.metadata), ...validate(o)],
    patchMeta: () => ({ strategy: 'replace' }),
    ...(scale ? { subresources: [scale] } : {}),
    custom: {
      crdUid: crd.metadata.uid ?? '',
      terminating,
      decode: (o) => decodeCustom(o, kind, v.name),
      warnings: deprecationWarnings(crd, v),
      fromStorage(o) {
        // Conversion strategy None: only apiVersion changes between versions.
        o.apiVersion = apiVersion;
      },
    },
  };
}

const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };
