import type { FieldCause } from '../../util/errors.js';
import { patchMetaFor, schemaFor } from '../openapi/schemas.js';

import { configKeyErrors, decodeBase64, MAX_DATA_SIZE, objectAt, strAt, stringMapAt } from './corehelpers.js';
import { FIELD_IMMUTABLE, forbidden, invalid, required, tooLong } from './fielderrors.js';

import { nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from './names.js';

import { age, ageColumn, column, fieldDoc, nameColumn } from './printing.js';

import type { KubeObject, ResourceDef } from './types.js';
import { jsonEqual } from '../../util/jsonequal.js';

export const SECRET_TYPE_OPAQUE = 'Opaque';

/** Keys each built-in secret type must carry (ValidateSecret). */
const REQUIRED_KEYS: Readonly<Record<string, readonly string[]>> = {
  'kubernetes.io/dockercfg': ['.dockercfg'],
  'kubernetes.io/dockerconfigjson': ['.dockerconfigjson'],
  'kubernetes.io/ssh-auth': ['ssh-privatekey'],
  'kubernetes.io/tls': ['tls.crt', 'tls.key'],
};
const IMMUTABLE_WHEN_SET = 'field is immutable when `immutable` is set';

/** stringData is write-only: its entries replace data's (base64-encoded), then it is dropped. */
function foldStringData(obj: KubeObject): void {
  const stringData = objectAt(obj, 'stringData');
  if (stringData) {
    const data: Record<string, unknown> = { ...stringMapAt(obj, 'data') };
    for (const [k, v] of Object.entries(stringData)) {
      if (typeof v === 'string') data[k] = Buffer.from(v, 'utf8').toString('base64');
    }
    obj.data = data;
  }
  delete obj.stringData;
}

function defaults(obj: KubeObject): void {
  foldStringData(obj);
  if (!strAt(obj, 'type')) obj.type = SECRET_TYPE_OPAQUE;
}

function validateSecret(obj: KubeObject): FieldCause[] {
  const out: FieldCause[] = [];
  const data = stringMapAt(obj, 'data');
  let size = 0;
  for (const [k, v] of Object.entries(data)) {
    for (const m of configKeyErrors(k)) out.push(invalid(`data[${k}]`, k, m));
    const bytes = typeof v === 'string' ? decodeBase64(v) : undefined;
    if (!bytes) out.push(invalid(`data[${k}]`, '<value omitted>', 'must be base64-encoded bytes'));
    else size += bytes.length;
  }
  if (size > MAX_DATA_SIZE) out.push(tooLong('data', MAX_DATA_SIZE));
  const type = strAt(obj, 'type');
  for (const key of REQUIRED_KEYS[type] ?? []) if (data[key] === undefined) out.push(required(`data[${key}]`));
  if (
    type === 'kubernetes.io/service-account-token' &&
    !obj.metadata.annotations?.['kubernetes.io/service-account.name']
  ) {
    out.push(required('metadata.annotations[kubernetes.io/service-account.name]'));
  }
  if (type === 'kubernetes.io/basic-auth' && data.username === undefined && data.password === undefined) {
    out.push(required('data[username]'));
  }
  return out;
}

export const secretResource: ResourceDef = {
  group: '',
  version: 'v1',
  kind: 'Secret',
  listKind: 'SecretList',
  plural: 'secrets',
  singular: 'secret',
  namespaced: true,
  shortNames: [],
  categories: [],
  hasStatus: false,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  schema: schemaFor('', 'v1', 'Secret'),
  fieldSelectors: {
    type: (o) => strAt(o, 'type'),
  },
  columns: [
    nameColumn(),
    column('Type', fieldDoc('', 'Secret', ['type'])),
    column('Data', fieldDoc('', 'Secret', ['data'])),
    ageColumn(),
  ],
  row: (o, now) => [o.metadata.name ?? '', strAt(o, 'type'), Object.keys(stringMapAt(o, 'data')).length, age(o, now)],

  defaults,
  prepareForCreate: defaults,
  prepareForUpdate: defaults,
  prepareForStatusUpdate() {},
  validateCreate(obj) {
    return [
      ...validateObjectMeta(obj.metadata, { namespaced: true, nameFn: nameIsDNSSubdomain }),
      ...validateSecret(obj),
    ];
  },
  validateUpdate(obj, old) {
    const out = [...validateObjectMetaUpdate(obj.metadata, old.metadata), ...validateSecret(obj)];
    const type = strAt(obj, 'type');
    if (type !== strAt(old, 'type')) out.push(invalid('type', type, FIELD_IMMUTABLE));
    if (old.immutable === true) {
      if (obj.immutable !== true) out.push(forbidden('immutable', IMMUTABLE_WHEN_SET));
      if (!jsonEqual(obj.data ?? {}, old.data ?? {})) out.push(forbidden('data', IMMUTABLE_WHEN_SET));
    }
    return out;
  },
  validateStatusUpdate() {
    return [];
  },
  patchMeta: patchMetaFor('', 'v1', 'Secret'),
};
