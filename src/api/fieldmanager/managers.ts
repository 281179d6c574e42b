/**
 * `metadata.managedFields` decoded into one field set per manager identity (manager, operation,
 * subresource, and the apiVersion of an Update), and encoded back in kube's entry order.
 */
import { FieldSet } from './fieldset.js';

export type Operation = 'Apply' | 'Update';

export interface ManagerEntry {
  readonly manager: string;
  readonly operation: Operation;
  readonly apiVersion: string;
  readonly subresource: string;
  time?: string;
  set: FieldSet;
}

/** Manager identity → its entry. Apply entries of one manager share an identity whatever their apiVersion. */
export type Managers = Map<string, ManagerEntry>;

export function managerKey(manager: string, operation: Operation, apiVersion: string, subresource: string): string {
  return JSON.stringify([manager, operation, operation === 'Update' ? apiVersion : '', subresource]);
}

export class ManagedFieldsError extends Error {}

/** Decodes managedFields; throws ManagedFieldsError for a malformed list (kube then ignores it). */
export function decodeManagedFields(list: unknown): Managers {
  const out: Managers = new Map();
  if (list === undefined || list === null) return out;
  if (!Array.isArray(list)) throw new ManagedFieldsError('managedFields must be a list');
  for (const raw of list) {
    if (!raw || typeof raw !== 'object') throw new ManagedFieldsError('managedFields entries must be objects');
    const e = raw as Record<string, unknown>;
    const manager = typeof e.manager === 'string' ? e.manager : '';
    const operation = e.operation;
    if (operation !== 'Apply' && operation !== 'Update')
      throw new ManagedFieldsError(`operation must be Apply or Update, got ${String(operation)}`);
    if (e.fieldsType !== 'FieldsV1')
      throw new ManagedFieldsError(`fieldsType must be FieldsV1, got ${String(e.fieldsType)}`);
    let set: FieldSet;
    try {
      set = FieldSet.fromFieldsV1(e.fieldsV1 ?? {});
    } catch (err) {
      throw new ManagedFieldsError((err as Error).message);
    }
    const apiVersion = typeof e.apiVersion === 'string' ? e.apiVersion : '';
    const subresource = typeof e.subresource === 'string' ? e.subresource : '';
    const key = managerKey(manager, operation, apiVersion, subresource);
    if (out.has(key)) throw new ManagedFieldsError(`duplicate entry for manager ${manager}`);
    out.set(key, {
      manager,
      operation,
      apiVersion,
      subresource,
      time: typeof e.time === 'string' ? e.time : undefined,
      set,
    });
  }
  return out;
}

/** A client asks to reset managedFields with an empty list, or a list of one empty entry. */
export function isResetManagedFields(list: unknown): boolean {
  if (!Array.isArray(list)) return false;
  if (list.length === 0) return true;
  return list.length === 1 && !!list[0] && typeof list[0] === 'object' && Object.keys(list[0] as object).length === 0;
}

function seconds(t: string | undefined): number {
  return t ? Math.floor(Date.parse(t) / 1000) : 0;
}

/** Entries in kube's order: Apply before Update, then by time, manager, apiVersion, subresource. */
export function encodeManagedFields(m: Managers): Record<string, unknown>[] | undefined {
  const entries = [...m.values()].filter((e) => !e.set.isEmpty());
  if (!entries.length) return undefined;
  entries.sort(
    (p, q) =>
      cmpStr(p.operation, q.operation) ||
      seconds(p.time) - seconds(q.time) ||
      cmpStr(p.manager, q.manager) ||
      cmpStr(p.apiVersion, q.apiVersion) ||
      cmpStr(p.subresource, q.subresource),
  );
  return entries.map((e) => {
    const o: Record<string, unknown> = { manager: e.manager, operation: e.operation, apiVersion: e.apiVersion };
    if (e.time) o.time = e.time;
    o.fieldsType = 'FieldsV1';
    o.fieldsV1 = e.set.toFieldsV1();
    if (e.subresource) o.subresource = e.subresource;
    return o;
  });
}

function cmpStr(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
