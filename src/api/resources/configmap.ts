import type { FieldCause } from '../../util/errors.js';
import { patchMetaFor, schemaFor } from '../openapi/schemas.js';

import { configKeyErrors, decodeBase64, MAX_DATA_SIZE, stringMapAt } from './corehelpers.js';
import { forbidden, invalid, tooLong } from './fielderrors.js';

import { nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from './names.js';

import { age, ageColumn, column, fieldDoc, nameColumn } from './printing.js';

import type { KubeObject, ResourceDef } from './types.js';
import { jsonEqual } from '../../util/jsonequal.js';

const IMMUTABLE_WHEN_SET = 'field is immutable when `immutable` is set';

function validateConfigMap(obj: KubeObject): FieldCause[] {
  const out: FieldCause[] = [];
  const data = stringMapAt(obj, 'data');
  const binary = stringMapAt(obj, 'binaryData');
  let size = 0;
  for (const [k, v] of Object.entries(data)) {
    for (const m of configKeyErrors(k)) out.push(invalid(`data[${k}]`, k, m));
    size += typeof v === 'string' ? Buffer.byteLength(v) : 0;
  }
  for (const [k, v] of Object.entries(binary)) {
    for (const m of configKeyErrors(k)) out.push(invalid(`binaryData[${k}]`, k, m));
    if (k in data) out.push(invalid(`binaryData[${k}]`, k, 'duplicate of key present in data'));
    const bytes = typeof v === 'string' ? decodeBase64(v) : undefined;
    if (!bytes) out.push(invalid(`binaryData[${k}]`, '<value omitted>', 'must be base64-encoded bytes'));
    else size += bytes.length;
  }
  if (size > MAX_DATA_SIZE) out.push(tooLong('', MAX_DATA_SIZE));
  return out;
}

export const configMapResource: ResourceDef = {
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  listKind: 'ConfigMapList',
  plural: 'configmaps',
  singular: 'configmap',
  namespaced: true,
  shortNames: ['cm'],
  categories: [],
  hasStatus: false,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  schema: schemaFor('', 'v1', 'ConfigMap'),
  fieldSelectors: {},
  columns: [nameColumn(), column('Data', fieldDoc('', 'ConfigMap', ['data'])), ageColumn()],
  row: (o, now) => [
    o.metadata.name ?? '',
    Object.keys(stringMapAt(o, 'data')).length + Object.keys(stringMapAt(o, 'binaryData')).length,
    age(o, now),
  ],

  prepareForCreate() {},
  prepareForUpdate() {},
  prepareForStatusUpdate() {},
  validateCreate(obj) {
    return [
      ...validateObjectMeta(obj.metadata, { namespaced: true, nameFn: nameIsDNSSubdomain }),
      ...validateConfigMap(obj),
    ];
  },
  validateUpdate(obj, old) {
    const out = [...validateObjectMetaUpdate(obj.metadata, old.metadata), ...validateConfigMap(obj)];
    if (old.immutable === true) {
      if (obj.immutable !== true) out.push(forbidden('immutable', IMMUTABLE_WHEN_SET));
      if (!jsonEqual(obj.data ?? {}, old.data ?? {})) out.push(forbidden('data', IMMUTABLE_WHEN_SET));
      if (!jsonEqual(obj.binaryData ?? {}, old.binaryData ?? {})) out.push(forbidden('binaryData', IMMUTABLE_WHEN_SET));
    }
    return out;
  },
  validateStatusUpdate() {
    return [];
  },
  patchMeta: patchMetaFor('', 'v1', 'ConfigMap'),
};
