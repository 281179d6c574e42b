/**
 * The CRD status controllers' decisions (apiextensions-apiserver's naming and establishing
 * controllers), as pure functions: which names a CRD is granted given the names other CRDs of its
 * group hold, and the NamesAccepted / Established conditions that follow.
 */
import type { CRD, CRDCondition, CRDConditionType, CRDNames, CRDStatus } from './types.js';
import { condition } from './types.js';

/** A refused name and why (kube's condition reasons). */
interface Conflict {
  readonly reason: string;
  readonly message: string;
}

function namesInUse(others: readonly CRD[]): {
  plural: Set<string>;
  singular: Set<string>;
  short: Set<string>;
  kind: Set<string>;
  listKind: Set<string>;
} {
  const u = {
    plural: new Set<string>(),
    singular: new Set<string>(),
    short: new Set<string>(),
    kind: new Set<string>(),
    listKind: new Set<string>(),
  };
  for (const o of others) {
    const n = o.status?.acceptedNames;
    if (!n?.plural) continue;
    u.plural.add(n.plural);
    if (n.singular) u.singular.add(n.singular);
    for (const s of n.shortNames ?? []) u.short.add(s);
    u.kind.add(n.kind);
    if (n.listKind) u.listKind.add(n.listKind);
  }
  return u;
}

/** The first conflict of `names` with the names `others` (same group) were granted. */
export function nameConflict(names: CRDNames, others: readonly CRD[]): Conflict | undefined {
  const u = namesInUse(others);
  const inUse = (v: string): string => `"${v}" is already in use`;
  if (u.plural.has(names.plural) || u.singular.has(names.plural))
    return { reason: 'PluralConflict', message: inUse(names.plural) };
  const singular = names.singular ?? names.kind.toLowerCase();
  if (u.singular.has(singular) || u.plural.has(singular))
    return { reason: 'SingularConflict', message: inUse(singular) };
  for (const s of names.shortNames ?? [])
    if (u.short.has(s) || u.plural.has(s) || u.singular.has(s))
      return { reason: 'ShortNamesConflict', message: inUse(s) };
  if (u.kind.has(names.kind) || u.listKind.has(names.kind))
    return { reason: 'KindConflict', message: inUse(names.kind) };
  const listKind = names.listKind ?? `${names.kind}List`;
  if (u.listKind.has(listKind) || u.kind.has(listKind)) return { reason: 'ListKindConflict', message: inUse(listKind) };
  return undefined;
}

/** Sets a condition, keeping lastTransitionTime when its status does not change. */
function setCondition(conds: CRDCondition[], c: Omit<CRDCondition, 'lastTransitionTime'>, now: string): CRDCondition[] {
  const old = conds.find((x) => x.type === c.type);
  const next: CRDCondition = {
    ...c,
    lastTransitionTime: old && old.status === c.status ? (old.lastTransitionTime ?? now) : now,
  };
  const out = conds.filter((x) => x.type !== c.type);
  out.push(next);
  return out;
}

const ORDER: readonly CRDConditionType[] = ['NamesAccepted', 'Established', 'Terminating', 'NonStructuralSchema'];

/**
 * The status `crd` should have given the CRDs of its group (`others` excludes it): accepted names
 * and the NamesAccepted and Established conditions. Established never goes back to False once
 * granted (kube keeps serving an established CRD whose new names conflict).
 */
export function desiredStatus(crd: CRD, others: readonly CRD[], now: string): CRDStatus {
  const status: CRDStatus = structuredClone(crd.status ?? {});
  let conds = status.conditions ?? [];
  const conflict = nameConflict(crd.spec.names, others);
  if (conflict) {
    conds = setCondition(conds, { type: 'NamesAccepted', status: 'False', ...conflict }, now);
  } else {
    status.acceptedNames = structuredClone(crd.spec.names);
    conds = setCondition(
      conds,
      { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' },
      now,
    );
  }
  const established = condition(crd, 'Established')?.status === 'True';
  if (!established) {
    conds = setCondition(
      conds,
      conflict
        ? { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' }
        : {
            type: 'Established',
            status: 'True',
            reason: 'InitialNamesAccepted',
            message: 'the initial names have been accepted',
          },
      now,
    );
  }
  status.conditions = conds.sort(
    (a, b) => ORDER.indexOf(a.type as CRDConditionType) - ORDER.indexOf(b.type as CRDConditionType),
  );
  return status;
}

/** kube's version priority: GA before beta before alpha, higher numbers first, others last by name. */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string): [number, number, number] | undefined => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return undefined;
    const stage = m[2] === 'alpha' ? 0 : m[2] === 'beta' ? 1 : 2;
    return [stage, Number(m[1]), Number(m[3] ?? 0)];
  };
  const pa = parse(a);
  const pb = parse(b);
  if (!pa || !pb) return pa ? -1 : pb ? 1 : a.localeCompare(b);
  if (pa[0] !== pb[0]) return pb[0] - pa[0];
  if (pa[1] !== pb[1]) return pb[1] - pa[1];
  return pb[2] - pa[2];
}
