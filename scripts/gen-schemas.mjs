#!/usr/bin/env node
// Generates src/api/openapi/definitions.json (OpenAPI v3 components.schemas with Kubernetes'
// definition names) for the kinds Stowage serves.
//
// Sources, both dev dependencies:
// - @kubernetes/client-node 1.4: the generated model classes' `attributeTypeMap` gives the shape
//   (field → type, number format, byte strings). We walk it from the root kinds.
// - kubernetes-types 1.30: tells which Go package a type lives in (its definition name), which
//   string fields are Quantity / Time / MicroTime, which are int-or-string, which fields are
//   required, the field descriptions — and which fields exist at v1.30 (client-node's models are
//   from a newer release; newer fields are dropped so strict validation matches the reported version).
// What neither can see — patch strategies, list types, group-version-kind — comes from the hand
// table below, transcribed from the struct tags and markers of Kubernetes' api types.
//
// Usage: node scripts/gen-schemas.mjs   (rewrites the JSON; commit the result)

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const modelsDir = join(root, 'node_modules/@kubernetes/client-node/dist/gen/models');
const ktDir = join(root, 'node_modules/kubernetes-types');
const outFile = join(root, 'src/api/openapi/definitions.json');

/** Root kinds: client-node class, group, version, kind. Lists and a few meta types ride along. */
const ROOTS = [
  ['V1Namespace', '', 'v1', 'Namespace'],
  ['V1Node', '', 'v1', 'Node'],
  ['V1Pod', '', 'v1', 'Pod'],
  ['V1PersistentVolume', '', 'v1', 'PersistentVolume'],
  ['V1PersistentVolumeClaim', '', 'v1', 'PersistentVolumeClaim'],
  ['CoreV1Event', '', 'v1', 'Event'],
  ['V1Secret', '', 'v1', 'Secret'],
  ['V1ConfigMap', '', 'v1', 'ConfigMap'],
  ['V1StorageClass', 'storage.k8s.io', 'v1', 'StorageClass'],
  ['V1CSIDriver', 'storage.k8s.io', 'v1', 'CSIDriver'],
  ['V1CSINode', 'storage.k8s.io', 'v1', 'CSINode'],
  ['V1VolumeAttachment', 'storage.k8s.io', 'v1', 'VolumeAttachment'],
  ['V1CSIStorageCapacity', 'storage.k8s.io', 'v1', 'CSIStorageCapacity'],
  ['V1Lease', 'coordination.k8s.io', 'v1', 'Lease'],
  ['V1PodDisruptionBudget', 'policy', 'v1', 'PodDisruptionBudget'],
  ['V1Service', '', 'v1', 'Service'],
  ['V1Endpoints', '', 'v1', 'Endpoints'],
  ['V1Deployment', 'apps', 'v1', 'Deployment'],
  ['V1ReplicaSet', 'apps', 'v1', 'ReplicaSet'],
  ['V1EndpointSlice', 'discovery.k8s.io', 'v1', 'EndpointSlice'],
  ['V1StatefulSet', 'apps', 'v1', 'StatefulSet'],
  ['V1DaemonSet', 'apps', 'v1', 'DaemonSet'],
  ['V1ControllerRevision', 'apps', 'v1', 'ControllerRevision'],
  ['V1Job', 'batch', 'v1', 'Job'],
];
/** Kinds without a List: create-only virtual resources and the eviction subresource's body. */
const SINGLE_ROOTS = [
  ['V1Eviction', 'policy', 'v1', 'Eviction'],
  ['V1Scale', 'autoscaling', 'v1', 'Scale'],
  ['V1SelfSubjectReview', 'authentication.k8s.io', 'v1', 'SelfSubjectReview'],
  // kubectl 1.27 asks `auth whoami` of v1beta1 only.
  ['V1beta1SelfSubjectReview', 'authentication.k8s.io', 'v1beta1', 'SelfSubjectReview'],
  ['V1SelfSubjectAccessReview', 'authorization.k8s.io', 'v1', 'SelfSubjectAccessReview'],
  ['V1SelfSubjectRulesReview', 'authorization.k8s.io', 'v1', 'SelfSubjectRulesReview'],
];
/** API group → kubernetes-types module of its v1 types (other versions: the same folder). */
const GROUP_MODULES = {
  '': 'core/v1',
  'storage.k8s.io': 'storage/v1',
  'coordination.k8s.io': 'coordination/v1',
  policy: 'policy/v1',
  apps: 'apps/v1',
  'discovery.k8s.io': 'discovery/v1',
  autoscaling: 'autoscaling/v1',
  batch: 'batch/v1',
  'authentication.k8s.io': 'authentication/v1',
  'authorization.k8s.io': 'authorization/v1',
};
const EXTRA_ROOTS = [
  ['V1Status', 'meta.k8s.io'],
  ['V1DeleteOptions', 'meta.k8s.io'],
  ['V1WatchEvent', 'meta.k8s.io'],
];

/** kubernetes-types module → Kubernetes' definition-name prefix. */
const PACKAGES = {
  'core/v1': 'io.k8s.api.core.v1',
  'storage/v1': 'io.k8s.api.storage.v1',
  'coordination/v1': 'io.k8s.api.coordination.v1',
  'policy/v1': 'io.k8s.api.policy.v1',
  'apps/v1': 'io.k8s.api.apps.v1',
  'discovery/v1': 'io.k8s.api.discovery.v1',
  'autoscaling/v1': 'io.k8s.api.autoscaling.v1',
  'batch/v1': 'io.k8s.api.batch.v1',
  'authentication/v1': 'io.k8s.api.authentication.v1',
  'authentication/v1beta1': 'io.k8s.api.authentication.v1beta1',
  'authorization/v1': 'io.k8s.api.authorization.v1',
  'meta/v1': 'io.k8s.apimachinery.pkg.apis.meta.v1',
  runtime: 'io.k8s.apimachinery.pkg.runtime',
  'api/resource': 'io.k8s.apimachinery.pkg.api.resource',
};
const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';

/**
 * Patch and list metadata from Kubernetes' Go types (v1.30): `patchStrategy`/`patchMergeKey`
 * struct tags and `+listType` / `+listMapKey` markers. Key: definition (short) + '.' + field.
 * Value: [patchStrategy | '', mergeKey | '', listType | '', listMapKeys].
 * The patch strategies were checked against the struct tags compiled into kubectl 1.30
 * (`strings kubectl.1.30 | grep patchStrategy`): list types are from the Go markers only.
 */
/**
 * Types Kubernetes marks `+structType=atomic` (v1.30): `x-kubernetes-map-type: atomic`, so that
 * server-side apply owns and replaces them whole.
 */
const ATOMIC_STRUCTS = [
  'io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector',
  'io.k8s.api.core.v1.LocalObjectReference',
  'io.k8s.api.core.v1.NodeSelector',
  'io.k8s.api.core.v1.NodeSelectorTerm',
  'io.k8s.api.core.v1.TopologySelectorTerm',
  'io.k8s.api.core.v1.ObjectReference',
  'io.k8s.api.core.v1.TypedLocalObjectReference',
  'io.k8s.api.core.v1.ConfigMapKeySelector',
  'io.k8s.api.core.v1.SecretKeySelector',
  'io.k8s.api.core.v1.ObjectFieldSelector',
  'io.k8s.api.core.v1.ResourceFieldSelector',
];

const PATCH_META = {
  'meta.v1.ObjectMeta.finalizers': ['merge', '', 'set', []],
  'meta.v1.ObjectMeta.ownerReferences': ['merge', 'uid', 'map', ['uid']],
  'meta.v1.ObjectMeta.managedFields': ['', '', 'atomic', []],
  'meta.v1.LabelSelector.matchExpressions': ['', '', 'atomic', []],
  'meta.v1.LabelSelectorRequirement.values': ['', '', 'atomic', []],
  'core.v1.PodSpec.volumes': ['merge,retainKeys', 'name', 'map', ['name']],
  'core.v1.PodSpec.initContainers': ['merge', 'name', 'map', ['name']],
  'core.v1.PodSpec.containers': ['merge', 'name', 'map', ['name']],
  'core.v1.PodSpec.ephemeralContainers': ['merge', 'name', 'map', ['name']],
  'core.v1.PodSpec.imagePullSecrets': ['merge', 'name', 'map', ['name']],
  'core.v1.PodSpec.hostAliases': ['merge', 'ip', 'map', ['ip']],
  'core.v1.PodSpec.tolerations': ['', '', 'atomic', []],
  'core.v1.PodSpec.readinessGates': ['', '', 'atomic', []],
  'core.v1.PodSpec.topologySpreadConstraints': ['merge', 'topologyKey', 'map', ['topologyKey', 'whenUnsatisfiable']],
  'core.v1.PodSpec.resourceClaims': ['merge,retainKeys', 'name', 'map', ['name']],
  'core.v1.PodSpec.schedulingGates': ['merge', 'name', 'map', ['name']],
  'core.v1.Container.ports': ['merge', 'containerPort', 'map', ['containerPort', 'protocol']],
  'core.v1.Container.env': ['merge', 'name', 'map', ['name']],
  'core.v1.Container.envFrom': ['', '', 'atomic', []],
  'core.v1.Container.volumeMounts': ['merge', 'mountPath', 'map', ['mountPath']],
  'core.v1.Container.volumeDevices': ['merge', 'devicePath', 'map', ['devicePath']],
  'core.v1.Container.resizePolicy': ['', '', 'atomic', []],
  'core.v1.Container.command': ['', '', 'atomic', []],
  'core.v1.Container.args': ['', '', 'atomic', []],
  'core.v1.EphemeralContainer.ports': ['merge', 'containerPort', 'map', ['containerPort', 'protocol']],
  'core.v1.EphemeralContainer.env': ['merge', 'name', 'map', ['name']],
  'core.v1.EphemeralContainer.envFrom': ['', '', 'atomic', []],
  'core.v1.EphemeralContainer.volumeMounts': ['merge', 'mountPath', 'map', ['mountPath']],
  'core.v1.EphemeralContainer.volumeDevices': ['merge', 'devicePath', 'map', ['devicePath']],
  'core.v1.EphemeralContainer.resizePolicy': ['', '', 'atomic', []],
  'core.v1.EphemeralContainer.command': ['', '', 'atomic', []],
  'core.v1.EphemeralContainer.args': ['', '', 'atomic', []],
  'core.v1.PodStatus.conditions': ['merge', 'type', 'map', ['type']],
  'core.v1.PodStatus.podIPs': ['merge', 'ip', 'map', ['ip']],
  'core.v1.PodStatus.hostIPs': ['merge', 'ip', 'atomic', []],
  'core.v1.PodStatus.initContainerStatuses': ['', '', 'atomic', []],
  'core.v1.PodStatus.containerStatuses': ['', '', 'atomic', []],
  'core.v1.PodStatus.ephemeralContainerStatuses': ['', '', 'atomic', []],
  'core.v1.PodStatus.resourceClaimStatuses': ['merge,retainKeys', 'name', 'map', ['name']],
  'core.v1.NodeSpec.podCIDRs': ['merge', '', 'set', []],
  'core.v1.NodeSpec.taints': ['', '', 'atomic', []],
  'core.v1.NodeStatus.conditions': ['merge', 'type', 'map', ['type']],
  'core.v1.NodeStatus.addresses': ['merge', 'type', 'map', ['type']],
  'core.v1.NodeStatus.images': ['', '', 'atomic', []],
  'core.v1.NodeStatus.volumesInUse': ['', '', 'atomic', []],
  'core.v1.NodeStatus.volumesAttached': ['', '', 'atomic', []],
  'core.v1.NamespaceSpec.finalizers': ['', '', 'atomic', []],
  'core.v1.NamespaceStatus.conditions': ['merge', 'type', 'map', ['type']],
  'core.v1.PersistentVolumeClaimStatus.conditions': ['merge', 'type', 'map', ['type']],
  'core.v1.PersistentVolumeClaimStatus.accessModes': ['', '', 'atomic', []],
  'core.v1.PersistentVolumeClaimSpec.accessModes': ['', '', 'atomic', []],
  'core.v1.PersistentVolumeSpec.accessModes': ['', '', 'atomic', []],
  'core.v1.PersistentVolumeSpec.mountOptions': ['', '', 'atomic', []],
  'core.v1.NodeSelector.nodeSelectorTerms': ['', '', 'atomic', []],
  'core.v1.NodeSelectorTerm.matchExpressions': ['', '', 'atomic', []],
  'core.v1.NodeSelectorTerm.matchFields': ['', '', 'atomic', []],
  'core.v1.NodeSelectorRequirement.values': ['', '', 'atomic', []],
  'core.v1.TopologySelectorTerm.matchLabelExpressions': ['', '', 'atomic', []],
  'core.v1.TopologySelectorLabelRequirement.values': ['', '', 'atomic', []],
  'storage.v1.StorageClass.mountOptions': ['', '', 'atomic', []],
  'storage.v1.StorageClass.allowedTopologies': ['', '', 'atomic', []],
  'storage.v1.CSIDriverSpec.volumeLifecycleModes': ['', '', 'set', []],
  'storage.v1.CSIDriverSpec.tokenRequests': ['', '', 'atomic', []],
  'storage.v1.CSINodeSpec.drivers': ['merge', 'name', 'map', ['name']],
  'storage.v1.CSINodeDriver.topologyKeys': ['', '', 'atomic', []],
  'policy.v1.PodDisruptionBudgetStatus.conditions': ['merge', 'type', 'map', ['type']],
  'core.v1.ServiceSpec.ports': ['merge', 'port', 'map', ['port', 'protocol']],
  'core.v1.ServiceSpec.clusterIPs': ['', '', 'atomic', []],
  'core.v1.ServiceSpec.externalIPs': ['', '', 'atomic', []],
  'core.v1.ServiceSpec.ipFamilies': ['', '', 'atomic', []],
  'core.v1.ServiceSpec.loadBalancerSourceRanges': ['', '', 'atomic', []],
  'core.v1.ServiceStatus.conditions': ['merge', 'type', 'map', ['type']],
  'core.v1.Endpoints.subsets': ['', '', 'atomic', []],
  'core.v1.EndpointSubset.addresses': ['', '', 'atomic', []],
  'core.v1.EndpointSubset.notReadyAddresses': ['', '', 'atomic', []],
  'core.v1.EndpointSubset.ports': ['', '', 'atomic', []],
  'discovery.v1.EndpointSlice.endpoints': ['', '', 'atomic', []],
  'discovery.v1.EndpointSlice.ports': ['', '', 'atomic', []],
  'discovery.v1.Endpoint.addresses': ['', '', 'set', []],
  'apps.v1.DeploymentSpec.strategy': ['retainKeys', '', '', []],
  'apps.v1.DeploymentStatus.conditions': ['merge', 'type', 'map', ['type']],
  'apps.v1.ReplicaSetStatus.conditions': ['merge', 'type', 'map', ['type']],
  'apps.v1.StatefulSetSpec.volumeClaimTemplates': ['', '', 'atomic', []],
  'apps.v1.StatefulSetStatus.conditions': ['merge', 'type', 'map', ['type']],
  'apps.v1.DaemonSetStatus.conditions': ['merge', 'type', 'map', ['type']],
  'batch.v1.JobStatus.conditions': ['merge', 'type', 'atomic', []],
  'batch.v1.PodFailurePolicy.rules': ['', '', 'atomic', []],
  'batch.v1.PodFailurePolicyRule.onPodConditions': ['', '', 'atomic', []],
  'batch.v1.PodFailurePolicyOnExitCodesRequirement.values': ['', '', 'set', []],
  'batch.v1.SuccessPolicy.rules': ['', '', 'atomic', []],
};

// ---- kubernetes-types index -------------------------------------------------------------------

/** module ('core/v1') → { decls: name → node, imports: name → module } */
const ktModules = new Map();
function ktModule(mod) {
  let m = ktModules.get(mod);
  if (m) return m;
  const file = join(ktDir, `${mod}.d.ts`);
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  m = { sf, decls: new Map(), imports: new Map() };
  for (const st of sf.statements) {
    if (ts.isInterfaceDeclaration(st) || ts.isTypeAliasDeclaration(st)) m.decls.set(st.name.text, st);
    if (
      ts.isImportDeclaration(st) &&
      st.importClause?.namedBindings &&
      ts.isNamedImports(st.importClause.namedBindings)
    ) {
      const target = relative(ktDir, join(dirname(file), st.moduleSpecifier.text)).replaceAll('\\', '/');
      for (const el of st.importClause.namedBindings.elements) m.imports.set(el.name.text, target);
    }
  }
  ktModules.set(mod, m);
  return m;
}
/** Resolve a type name as seen from module `mod` → { mod, name, node }. */
function ktResolve(mod, name) {
  const m = ktModule(mod);
  if (m.decls.has(name)) return { mod, name, node: m.decls.get(name) };
  const from = m.imports.get(name);
  if (from) return ktResolve(from, name);
  return undefined;
}
function docOf(node) {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc);
  const text = docs
    .map((d) => (typeof d.comment === 'string' ? d.comment : ''))
    .join('\n')
    .trim();
  return text || undefined;
}
function ktProps(decl) {
  const props = new Map();
  if (!ts.isInterfaceDeclaration(decl)) return props;
  for (const mem of decl.members) {
    if (ts.isPropertySignature(mem) && mem.name && ts.isIdentifier(mem.name)) {
      props.set(mem.name.text, { type: mem.type, optional: Boolean(mem.questionToken), doc: docOf(mem) });
    }
  }
  return props;
}

// ---- client-node models -------------------------------------------------------------------------

async function cnAttrs(cls) {
  const mod = await import(pathToFileURL(join(modelsDir, `${cls}.js`)).href);
  const c = mod[cls];
  if (!c || !Array.isArray(c.attributeTypeMap)) throw new Error(`client-node model ${cls} has no attributeTypeMap`);
  return c.attributeTypeMap;
}

// ---- walk ---------------------------------------------------------------------------------------

const defs = {};
const pending = [];
let dropped = [];
const ktOnly = [];

function defName(mod, name) {
  const pkg = PACKAGES[mod];
  if (!pkg) throw new Error(`no package for kubernetes-types module ${mod}`);
  return `${pkg}.${name}`;
}
const ref = (name) => ({ $ref: `#/components/schemas/${name}` });

/** Special scalar/opaque definitions, keyed by kubernetes-types name. */
function specialRef(resolved) {
  const name = defName(resolved.mod, resolved.name);
  const doc = docOf(resolved.node);
  const base = doc ? { description: doc } : {};
  switch (resolved.name) {
    case 'Quantity':
      defs[name] ??= { ...base, type: 'string', format: 'quantity', 'x-kubernetes-int-or-string': true };
      return ref(name);
    case 'Time':
      defs[name] ??= { ...base, type: 'string', format: 'date-time' };
      return ref(name);
    case 'MicroTime':
      defs[name] ??= { ...base, type: 'string', format: 'date-time' };
      return ref(name);
    case 'RawExtension':
    case 'FieldsV1':
      defs[name] ??= { ...base, type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
      return ref(name);
    default:
      return undefined;
  }
}
function intOrStringRef() {
  defs[INT_OR_STRING] ??= {
    description:
      'IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML marshalling and unmarshalling, it produces or consumes the inner type.',
    type: 'string',
    format: 'int-or-string',
    'x-kubernetes-int-or-string': true,
  };
  return ref(INT_OR_STRING);
}

/** Element / value type node of an Array<T>, T[] or { [k: string]: T } in kubernetes-types. */
function ktElem(node) {
  if (!node) return undefined;
  if (ts.isArrayTypeNode(node)) return node.elementType;
  if (ts.isTypeReferenceNode(node) && node.typeName.getText() === 'Array') return node.typeArguments?.[0];
  if (ts.isTypeLiteralNode(node)) {
    const idx = node.members.find(ts.isIndexSignatureDeclaration);
    return idx?.type;
  }
  return undefined;
}

function schemaOf(cnType, cnFormat, ktNode, mod) {
  // kubernetes-types knows the named scalar types that client-node flattens to string/Date.
  if (
    ktNode &&
    ts.isTypeReferenceNode(ktNode) &&
    ts.isIdentifier(ktNode.typeName) &&
    ktNode.typeName.text !== 'Array'
  ) {
    const r = ktResolve(mod, ktNode.typeName.text);
    if (r) {
      const sp = specialRef(r);
      if (sp) return sp;
    }
  }
  if (ktNode && ts.isUnionTypeNode(ktNode)) return intOrStringRef();
  if (cnType === 'IntOrString' || cnFormat === 'int-or-string') return intOrStringRef();
  let m;
  if ((m = /^Array<(.+)>$/.exec(cnType))) {
    return { type: 'array', items: schemaOf(m[1], '', ktElem(ktNode), mod) };
  }
  if ((m = /^\{ \[key: string\]: (.+); \}$/.exec(cnType))) {
    const value = schemaOf(m[1], cnFormat, ktElem(ktNode), mod);
    return { type: 'object', additionalProperties: value };
  }
  switch (cnType) {
    case 'string':
      return cnFormat ? { type: 'string', format: cnFormat } : { type: 'string' };
    case 'number':
      if (cnFormat === 'int32' || cnFormat === 'int64') return { type: 'integer', format: cnFormat };
      return { type: 'number', format: 'double' };
    case 'boolean':
      return { type: 'boolean' };
    case 'Date':
      return { type: 'string', format: 'date-time' };
    case 'any':
      return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  }
  // A model class: find its kubernetes-types interface to learn its package.
  if (!ktNode || !ts.isTypeReferenceNode(ktNode) || !ts.isIdentifier(ktNode.typeName)) {
    throw new Error(`cannot place ${cnType} (no kubernetes-types type) in ${mod}`);
  }
  const r = ktResolve(mod, ktNode.typeName.text);
  if (!r) throw new Error(`kubernetes-types has no ${ktNode.typeName.text} visible from ${mod}`);
  const name = defName(r.mod, r.name);
  if (!(name in defs)) {
    defs[name] = null; // placeholder: being built
    pending.push({ cls: cnType, kt: r, name });
  }
  return ref(name);
}

/** Schema from a kubernetes-types node alone (no number formats known: integer). */
function ktSchema(node, mod) {
  if (ts.isUnionTypeNode(node)) return intOrStringRef();
  const elem = ktElem(node);
  if (ts.isArrayTypeNode(node) || (ts.isTypeReferenceNode(node) && node.typeName.getText() === 'Array')) {
    return { type: 'array', items: ktSchema(elem, mod) };
  }
  if (ts.isTypeLiteralNode(node)) return { type: 'object', additionalProperties: ktSchema(elem, mod) };
  if (node.kind === ts.SyntaxKind.StringKeyword) return { type: 'string' };
  if (node.kind === ts.SyntaxKind.NumberKeyword) return { type: 'integer' };
  if (node.kind === ts.SyntaxKind.BooleanKeyword) return { type: 'boolean' };
  if (ts.isTypeReferenceNode(node) && ts.isIdentifier(node.typeName)) {
    const r = ktResolve(mod, node.typeName.text);
    if (!r) throw new Error(`kubernetes-types has no ${node.typeName.text} visible from ${mod}`);
    const sp = specialRef(r);
    if (sp) return sp;
    const name = defName(r.mod, r.name);
    if (!(name in defs)) {
      defs[name] = null;
      pending.push({ cls: undefined, kt: r, name });
    }
    return ref(name);
  }
  throw new Error(`unhandled kubernetes-types node ${ts.SyntaxKind[node.kind]} in ${mod}`);
}

/** As kube's spec does: a described reference is `allOf: [$ref]` (siblings of a bare $ref are ignored). */
function withDoc(doc, s) {
  if (!doc) return s;
  if (s.$ref) return { description: doc, allOf: [s] };
  return { description: doc, ...s };
}

async function buildDef({ cls, kt, name }) {
  const attrs = cls && existsSync(join(modelsDir, `${cls}.js`)) ? await cnAttrs(cls) : [];
  const props = ktProps(kt.node);
  const short = name.replace(/^io\.k8s\.(api|apimachinery\.pkg\.apis)\./, '');
  const def = { type: 'object' };
  const doc = docOf(kt.node);
  if (doc) def.description = doc;
  def.properties = {};
  const required = [];
  for (const a of attrs) {
    const p = props.get(a.baseName);
    if (!p) {
      dropped.push(`${short}.${a.baseName}`);
      continue;
    }
    const s = schemaOf(a.type, a.format, p.type, kt.mod);
    const field = withDoc(p.doc, s);
    const meta = PATCH_META[`${short}.${a.baseName}`];
    if (meta) {
      const [strategy, key, listType, mapKeys] = meta;
      if (strategy) field['x-kubernetes-patch-strategy'] = strategy;
      if (key) field['x-kubernetes-patch-merge-key'] = key;
      if (listType) field['x-kubernetes-list-type'] = listType;
      if (mapKeys.length) field['x-kubernetes-list-map-keys'] = mapKeys;
    }
    def.properties[a.baseName] = field;
    if (!p.optional) required.push(a.baseName);
  }
  // Fields v1.30 has that client-node's newer models dropped: shape from kubernetes-types alone.
  for (const [k, p] of props) {
    if (attrs.some((a) => a.baseName === k)) continue;
    ktOnly.push(`${short}.${k}`);
    def.properties[k] = withDoc(p.doc, ktSchema(p.type, kt.mod));
    if (!p.optional) required.push(k);
  }
  if (required.length) def.required = required;
  defs[name] = def;
}

async function main() {
  const gvkOf = new Map();
  const start = [];
  for (const [cls, group, version, kind] of ROOTS) {
    start.push([cls, { group, version, kind }]);
    start.push([`${cls}List`, { group, version, kind: `${kind}List` }]);
  }
  for (const [cls, group, version, kind] of SINGLE_ROOTS) start.push([cls, { group, version, kind }]);
  for (const [cls] of EXTRA_ROOTS) start.push([cls, undefined]);
  for (const [cls, gvk] of start) {
    const ktName = cls.replace(/^(CoreV1|V1beta1|V1alpha1|V1)/, '');
    const mod = gvk ? GROUP_MODULES[gvk.group].replace(/\/v1$/, `/${gvk.version}`) : 'meta/v1';
    const r = ktResolve(mod, ktName);
    if (!r) throw new Error(`kubernetes-types has no ${mod} ${ktName}`);
    const name = defName(r.mod, r.name);
    if (gvk) gvkOf.set(name, gvk);
    if (!(name in defs)) {
      defs[name] = null;
      pending.push({ cls, kt: r, name });
    }
  }
  while (pending.length) await buildDef(pending.shift());
  for (const [name, gvk] of gvkOf) defs[name]['x-kubernetes-group-version-kind'] = [gvk];
  // Kubernetes marks these meta types as usable by every group.
  for (const [cls, group] of EXTRA_ROOTS) {
    const name = defName('meta/v1', cls.replace(/^V1/, ''));
    defs[name]['x-kubernetes-group-version-kind'] = [
      { group: '', version: 'v1', kind: cls.replace(/^V1/, '') },
      { group, version: 'v1', kind: cls.replace(/^V1/, '') },
    ];
  }
  for (const name of ATOMIC_STRUCTS) {
    if (!defs[name]) throw new Error(`atomic struct table names unknown definition ${name}`);
    defs[name]['x-kubernetes-map-type'] = 'atomic';
  }
  for (const key of Object.keys(PATCH_META)) {
    const [short, field] = [key.slice(0, key.lastIndexOf('.')), key.slice(key.lastIndexOf('.') + 1)];
    const full = Object.keys(defs).find((n) => n.endsWith(`.${short}`) && n.split('.').slice(-3).join('.') === short);
    if (!full || !defs[full].properties?.[field]) throw new Error(`patch table names unknown field ${key}`);
  }
  const sorted = Object.fromEntries(
    Object.keys(defs)
      .sort()
      .map((k) => [k, defs[k]]),
  );
  writeFileSync(outFile, JSON.stringify(sorted, null, 1) + '\n');
  const uniqueDropped = [...new Set(dropped)];
  console.log(
    `wrote ${Object.keys(sorted).length} definitions to ${relative(root, outFile)}; ${uniqueDropped.length} client-node fields newer than v1.30 dropped`,
  );
  console.log(`${ktOnly.length} v1.30 fields absent from client-node taken from kubernetes-types alone`);
  if (process.env.VERBOSE) console.log(['dropped:', ...uniqueDropped, 'kubernetes-types only:', ...ktOnly].join('\n'));
}

await main();
