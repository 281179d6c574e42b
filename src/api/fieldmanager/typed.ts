/**
 * structured-merge-diff's operations on an object and its type: the field set an object
 * specifies, the comparison of two objects, the merge of an applied configuration into a live
 * object, and the removal of fields. Objects are plain JSON; absent and `undefined` are the same.
 */
import { FieldSet, pathString } from './fieldset.js';

import { concrete, DEDUCED as DEDUCED_ELEM, type ListType, type MapType, type TypeNode } from './types.js';
import { jsonEqual } from '../../util/jsonequal.js';

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Struct fields Go always serializes (non-pointer structs): the empty object kube compares a
 * create against already holds them, so they never show up as added nodes (`.`) themselves.
 */
const ALWAYS_PRESENT = new Set(['metadata', 'spec', 'status', 'template', 'strategy', 'updateStrategy', 'resources']);

/** The path element of a list item, or undefined for an atomic list. */
export function listItemPe(t: ListType, item: unknown): string | undefined {
  if (t.rel === 'set') return `v:${JSON.stringify(item)}`;
  if (t.rel !== 'map') return undefined;
  const o = isObj(item) ? item : {};
  const key: Obj = {};
  for (const k of [...t.keys].sort()) {
    let v = o[k];
    // A key kube defaults (a port's protocol) identifies the item as if it were set.
    if (v === undefined && k === 'protocol') v = 'TCP';
    if (v !== undefined) key[k] = v;
  }
  return `k:${JSON.stringify(key)}`;
}

/** The fields an object specifies (TypedValue.ToFieldSet): leaves, list items, and string-map keys. */
export function toFieldSet(v: unknown, t: TypeNode): FieldSet {
  const out = new FieldSet();
  fieldsOf(v, t, out);
  return out;
}

function fieldsOf(v: unknown, t0: TypeNode, n: FieldSet): void {
  const t = concrete(t0, v);
  if (t.t === 'scalar') {
    n.member = true;
    return;
  }
  if (t.t === 'list') {
    if (t.rel === 'atomic') {
      n.member = true;
      return;
    }
    if (!Array.isArray(v)) return;
    for (const item of v) {
      const c = n.ensure(listItemPe(t, item)!);
      fieldsOf(item, t.elem, c);
      c.member = true;
    }
    return;
  }
  if (t.atomic) {
    n.member = true;
    return;
  }
  if (!isObj(v)) return;
  for (const [k, cv] of Object.entries(v)) {
    if (cv === undefined) continue;
    const ft = t.field(k);
    const c = n.ensure(`f:${k}`);
    fieldsOf(cv, ft ?? t.elem, c);
    if (!ft) c.member = true;
    if (!c.member && !c.children?.size) n.children!.delete(`f:${k}`);
  }
}

export interface Comparison {
  readonly added: FieldSet;
  readonly modified: FieldSet;
  readonly removed: FieldSet;
}

/**
 * What changed from `lhs` to `rhs` (TypedValue.Compare): leaves added/modified/removed, and
 * containers added/removed. Top-level fields that are members of `ignored` are not compared
 * (Comparison.FilterFields, without walking them first).
 */
export function compare(lhs: unknown, rhs: unknown, t: TypeNode, ignored?: FieldSet): Comparison {
  const c = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  cmp(lhs, rhs, t, [], c, ignored);
  return c;
}

function isEmptyContainer(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (Array.isArray(v)) return v.length === 0;
  return isObj(v) && Object.keys(v).every((k) => v[k] === undefined);
}

function cmp(l: unknown, r: unknown, t0: TypeNode, path: string[], c: Comparison, ignored?: FieldSet): void {
  const t = concrete(t0, r !== undefined ? r : l);
  const leaf = (): void => {
    if (l === undefined) c.added.insert(path);
    else if (r === undefined) c.removed.insert(path);
    else if (!jsonEqual(l, r)) c.modified.insert(path);
  };
  if (t.t === 'scalar') return leaf();
  if (t.t === 'list') {
    const ll = Array.isArray(l) ? l : undefined;
    const rl = Array.isArray(r) ? r : undefined;
    if (t.rel === 'atomic' || ((!ll || !ll.length) && (!rl || !rl.length)) || (l != null && !ll) || (r != null && !rl))
      return leaf();
    const li = indexItems(t, ll);
    const ri = indexItems(t, rl);
    for (const [pe, lv] of li) {
      path.push(pe);
      cmp(lv, ri.get(pe), t.elem, path, c);
      path.pop();
    }
    for (const [pe, rv] of ri) {
      if (li.has(pe)) continue;
      path.push(pe);
      cmp(undefined, rv, t.elem, path, c);
      path.pop();
    }
  } else {
    if (
      t.atomic ||
      (isEmptyContainer(l) && isEmptyContainer(r)) ||
      (l != null && !isObj(l)) ||
      (r != null && !isObj(r))
    )
      return leaf();
    const lo = isObj(l) ? l : undefined;
    const ro = isObj(r) ? r : undefined;
    const visit = (k: string): void => {
      if (ignored?.child(`f:${k}`)?.member) return;
      const ft = t.field(k);
      let lv = lo?.[k];
      let rv = ro?.[k];
      if (ft && t.struct) {
        const kind = concrete(ft, lv ?? rv).t;
        if (ALWAYS_PRESENT.has(k) && kind === 'map') {
          // Go's zero value of a non-pointer struct is an empty object on both sides.
          if (lv === undefined && lo) lv = {};
          if (rv === undefined && ro) rv = {};
        } else if (t.required.has(k) && kind !== 'scalar' && lo && ro && (lv === undefined) !== (rv === undefined)) {
          // A field without omitempty is serialized as null when empty: present, not added or removed.
          if (lv === undefined) lv = null;
          else rv = null;
        }
      }
      if (lv === undefined && rv === undefined) return;
      path.push(`f:${k}`);
      cmp(lv, rv, ft ?? t.elem, path, c);
      path.pop();
    };
    if (lo) for (const k of Object.keys(lo)) visit(k);
    if (ro) for (const k of Object.keys(ro)) if (!lo || lo[k] === undefined) visit(k);
  }
  // Containers that are not leaves: added or removed as a whole node too.
  if (path.length === 0) return;
  if (l === undefined) c.added.insert(path);
  else if (r === undefined) c.removed.insert(path);
}

function indexItems(t: ListType, items: readonly unknown[] | undefined): Map<string, unknown> {
  const m = new Map<string, unknown>();
  if (!items) return m;
  for (const it of items) {
    const pe = listItemPe(t, it)!;
    if (!m.has(pe)) m.set(pe, it);
  }
  return m;
}

/**
 * The live object with an applied configuration merged in (TypedValue.Merge): the configuration's
 * leaves win, maps and granular lists merge item by item, atomic parts are replaced. A null in
 * the configuration clears the field (a typed object has no nulls).
 */
export function merge(lhs: unknown, rhs: unknown, t: TypeNode): unknown {
  if (rhs === undefined) return lhs === undefined ? undefined : structuredClone(lhs);
  if (rhs === null) return undefined;
  if (lhs === undefined || lhs === null) return dropNulls(structuredClone(rhs));
  const ct = concrete(t, rhs);
  if (ct.t === 'scalar') return rhs;
  if (ct.t === 'list') {
    if (ct.rel === 'atomic' || !Array.isArray(lhs) || !Array.isArray(rhs)) return dropNulls(structuredClone(rhs));
    return mergeList(ct, lhs, rhs);
  }
  if (ct.atomic || !isObj(lhs) || !isObj(rhs)) return dropNulls(structuredClone(rhs));
  return mergeMap(ct, lhs, rhs);
}

function mergeMap(t: MapType, l: Obj, r: Obj): Obj {
  const out: Obj = {};
  for (const k of Object.keys(l)) {
    const v = k in r ? merge(l[k], r[k], t.field(k) ?? t.elem) : structuredClone(l[k]);
    if (v !== undefined) out[k] = v;
  }
  for (const k of Object.keys(r)) {
    if (k in l) continue;
    const v = merge(undefined, r[k], t.field(k) ?? t.elem);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/**
 * Items in the live order, except that items both sides hold follow the configuration's order.
 * Live items the configuration does not name stay as they are, repeated keys included.
 */
function mergeList(t: ListType, l: readonly unknown[], r: readonly unknown[]): unknown[] {
  const lPes = l.map((it) => listItemPe(t, it)!);
  const lFirst = new Map<string, number>();
  lPes.forEach((pe, i) => lFirst.has(pe) || lFirst.set(pe, i));
  const ri = indexItems(t, r);
  const rOrder = [...ri.keys()];
  const shared = rOrder.filter((pe) => lFirst.has(pe));
  const done = new Set<string>();
  const out: unknown[] = [];
  const take = (pe: string): void => {
    const i = lFirst.get(pe);
    const v = merge(i === undefined ? undefined : l[i], ri.get(pe), t.elem);
    if (v !== undefined) out.push(v);
    done.add(pe);
  };
  let a = 0;
  let b = 0;
  let si = 0;
  while (a < l.length || b < rOrder.length) {
    if (a < l.length) {
      const pe = lPes[a]!;
      if (!ri.has(pe)) {
        out.push(structuredClone(l[a]));
        a++;
        continue;
      }
      if (done.has(pe) || (si < shared.length && shared[si] !== pe)) {
        a++; // merged already, or a shared item whose turn comes later in the configuration's order
        continue;
      }
      if (b < rOrder.length && rOrder[b] === pe) {
        take(pe);
        a++;
        b++;
        si++;
        continue;
      }
    }
    if (b < rOrder.length) {
      const pe = rOrder[b]!;
      if (!done.has(pe)) take(pe);
      b++;
      if (si < shared.length && shared[si] === pe) si++;
      continue;
    }
    a++;
  }
  return out;
}

function dropNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropNulls);
  if (isObj(v)) {
    for (const k of Object.keys(v)) {
      if (v[k] === null) delete v[k];
      else v[k] = dropNulls(v[k]);
    }
  }
  return v;
}

/**
 * `v` without the fields and items in `set` (TypedValue.RemoveItems): a member path goes with
 * everything below it; maps left empty go too. Returns undefined when nothing is left.
 */
export function removeItems(v: unknown, set: FieldSet, t0: TypeNode): unknown {
  const t = concrete(t0, v);
  if (t.t === 'scalar') return v;
  if (t.t === 'list') {
    if (!Array.isArray(v) || v.length === 0 || t.rel === 'atomic') return v;
    const out: unknown[] = [];
    for (const item of v) {
      const n = set.child(listItemPe(t, item)!);
      if (n?.member) continue;
      out.push(n?.children?.size ? (removeItems(item, n, t.elem) ?? {}) : item);
    }
    return out.length ? out : undefined;
  }
  if (!isObj(v) || t.atomic) return v;
  const out: Obj = {};
  for (const [k, cv] of Object.entries(v)) {
    const n = set.child(`f:${k}`);
    if (n?.member) continue;
    const nv = n?.children?.size ? removeItems(cv, n, t.field(k) ?? t.elem) : cv;
    if (nv !== undefined) out[k] = nv;
  }
  return Object.keys(out).length || Object.keys(v).length === 0 ? out : undefined;
}

/** `set` with every named struct field that has members below it made a member (Set.EnsureNamedFieldsAreMembers). */
export function ensureNamedFieldsAreMembers(set: FieldSet, t0: TypeNode): FieldSet {
  const out = set.clone();
  const walk = (n: FieldSet, t: TypeNode): void => {
    if (!n.children) return;
    for (const [pe, c] of n.children) {
      let ct: TypeNode | undefined;
      if (t.t === 'map') {
        const ft = pe.startsWith('f:') ? t.field(pe.slice(2)) : undefined;
        if (ft && t.struct) c.member = true;
        ct = ft ?? t.elem;
      } else if (t.t === 'list') ct = t.elem;
      if (ct && c.children?.size) walk(c, ct);
    }
  };
  walk(out, t0);
  return out;
}

/**
 * A field path given by segments (names and list indexes) in structured-merge-diff's path
 * elements: list items by key or value where the list has them, by index where it is atomic.
 */
export function pathElementsOf(obj: unknown, t0: TypeNode, segs: readonly (string | number)[]): string[] {
  const out: string[] = [];
  let v = obj;
  let t = t0;
  for (const seg of segs) {
    const ct = concrete(t, v);
    if (typeof seg === 'number') {
      const item = Array.isArray(v) ? v[seg] : undefined;
      const pe = ct.t === 'list' ? listItemPe(ct, item) : undefined;
      out.push(pe ?? `i:${seg}`);
      v = item;
      t = ct.t === 'list' ? ct.elem : DEDUCED_ELEM;
    } else {
      out.push(`f:${seg}`);
      v = isObj(v) ? v[seg] : undefined;
      t = ct.t === 'map' ? (ct.field(seg) ?? ct.elem) : DEDUCED_ELEM;
    }
  }
  return out;
}

/** Lists of `v` holding two items with one key or value, as `<list path>: duplicate entries for key <item>`. */
export function duplicateEntries(v: unknown, t0: TypeNode, path: string[] = []): string[] {
  const t = concrete(t0, v);
  const out: string[] = [];
  if (t.t === 'list' && Array.isArray(v)) {
    if (t.rel === 'atomic') return out;
    const seen = new Set<string>();
    for (const item of v) {
      const pe = listItemPe(t, item)!;
      if (seen.has(pe)) out.push(`${pathString(path)}: duplicate entries for key ${pathString([pe])}`);
      seen.add(pe);
      out.push(...duplicateEntries(item, t.elem, [...path, pe]));
    }
  } else if (t.t === 'map' && !t.atomic && isObj(v)) {
    for (const [k, cv] of Object.entries(v))
      out.push(...duplicateEntries(cv, t.field(k) ?? t.elem, [...path, `f:${k}`]));
  }
  return out;
}
