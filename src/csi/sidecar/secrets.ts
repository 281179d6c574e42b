/**
 * StorageClass secret parameters (`csi.storage.k8s.io/<kind>-secret-name|namespace`) and their
 * templates, as the external-provisioner resolves them:
 * - namespace templates may use `${pv.name}` and `${pvc.namespace}`;
 * - name templates may also use `${pvc.name}`, and, except for the provisioner secret (which
 *   must be resolvable at deletion time too), `${pvc.annotations['<key>']}`;
 * - name and namespace are given together or not at all; the results must be a DNS-1123
 *   subdomain (name) and label (namespace).
 */
import { InvalidError } from '../../util/errors.js';

const PREFIX = 'csi.storage.k8s.io/';

export const SECRET_KINDS = [
  'provisioner',
  'controllerPublish',
  'nodeStage',
  'nodePublish',
  'controllerExpand',
  'nodeExpand',
] as const;
export type SecretKind = (typeof SECRET_KINDS)[number];

const PARAM_STEM: Readonly<Record<SecretKind, string>> = {
  provisioner: 'provisioner',
  controllerPublish: 'controller-publish',
  nodeStage: 'node-stage',
  nodePublish: 'node-publish',
  controllerExpand: 'controller-expand',
  nodeExpand: 'node-expand',
};

export function secretParamKeys(kind: SecretKind): { name: string; namespace: string } {
  const stem = PARAM_STEM[kind];
  return { name: `${PREFIX}${stem}-secret-name`, namespace: `${PREFIX}${stem}-secret-namespace` };
}

export const FSTYPE_PARAM = `${PREFIX}fstype`;

/** Every reserved key the sidecar understands; other `csi.storage.k8s.io/` keys are refused. */
export const RESERVED_PARAMS: ReadonlySet<string> = new Set([
  FSTYPE_PARAM,
  ...SECRET_KINDS.flatMap((k) => Object.values(secretParamKeys(k))),
]);

/**
 * StorageClass parameters as the driver sees them: the reserved `csi.storage.k8s.io/` keys
 * removed. An unknown key in that namespace is a mistake the user should hear about.
 */
export function driverParameters(params: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(params)) {
    if (!k.startsWith(PREFIX)) out[k] = v;
    else if (!RESERVED_PARAMS.has(k))
      throw new InvalidError(`found unknown parameter key "${k}" with reserved namespace ${PREFIX}`);
  }
  return out;
}

export interface TemplateContext {
  readonly pvName: string;
  readonly pvcName?: string;
  readonly pvcNamespace?: string;
  readonly pvcAnnotations?: Readonly<Record<string, string>>;
}

export interface SecretRef {
  readonly name: string;
  readonly namespace: string;
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

type Field = 'name' | 'namespace';

function resolveTemplate(tpl: string, field: Field, kind: SecretKind, ctx: TemplateContext): string {
  return tpl.replace(/\$\{([^}]*)\}/g, (whole, expr: string) => {
    const e = expr.trim();
    const need = (v: string | undefined): string => {
      if (v === undefined)
        throw new InvalidError(
          `${kind} secret ${field} template ${JSON.stringify(tpl)}: ${whole} cannot be resolved here`,
        );
      return v;
    };
    if (e === 'pv.name') return ctx.pvName;
    if (e === 'pvc.namespace') return need(ctx.pvcNamespace);
    if (field === 'name' && e === 'pvc.name') return need(ctx.pvcName);
    const ann = /^pvc\.annotations\['([^']+)'\]$/.exec(e);
    if (field === 'name' && kind !== 'provisioner' && ann) return need(ctx.pvcAnnotations?.[ann[1]!]);
    throw new InvalidError(
      `${kind} secret ${field} template ${JSON.stringify(tpl)} uses ${whole}, which is not allowed there`,
    );
  });
}

/**
 * The secret a class names for `kind`, templates resolved; undefined when the class names none.
 * Throws InvalidError for half a reference, a bad template, or an invalid resolved name.
 */
export function resolveSecretRef(
  kind: SecretKind,
  params: Readonly<Record<string, string>>,
  ctx: TemplateContext,
): SecretRef | undefined {
  const keys = secretParamKeys(kind);
  const nameTpl = params[keys.name];
  const nsTpl = params[keys.namespace];
  if (nameTpl === undefined && nsTpl === undefined) return undefined;
  if (nameTpl === undefined || nsTpl === undefined) {
    throw new InvalidError(
      `either name and namespace for ${kind} secrets specified, both must be specified (${keys.name}, ${keys.namespace})`,
    );
  }
  const namespace = resolveTemplate(nsTpl, 'namespace', kind, ctx);
  if (!DNS1123_LABEL.test(namespace) || namespace.length > 63) {
    throw new InvalidError(
      `${kind} secret namespace ${JSON.stringify(namespace)} (from ${JSON.stringify(nsTpl)}) is not a valid namespace name`,
    );
  }
  const name = resolveTemplate(nameTpl, 'name', kind, ctx);
  if (!DNS1123_SUBDOMAIN.test(name) || name.length > 253) {
    throw new InvalidError(
      `${kind} secret name ${JSON.stringify(name)} (from ${JSON.stringify(nameTpl)}) is not a valid secret name`,
    );
  }
  return { name, namespace };
}

/** A Secret's data as CSI secrets: base64 values decoded to UTF-8 strings. */
export function secretData(data: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(data ?? {})) out[k] = Buffer.from(v, 'base64').toString('utf8');
  return out;
}
