/**
 * A set of field paths (structured-merge-diff's fieldpath.Set) as a trie whose edges are path
 * elements written as `fieldsV1` writes them: `f:<field>`, `k:<json of the list-map keys>`,
 * `v:<json of a set value>`, `i:<index>`. A node is a member when its own path is in the set.
 */
export class FieldSet {
  member = false;
  children: Map<string, FieldSet> | undefined;

  child(pe: string): FieldSet | undefined {
    return this.children?.get(pe);
  }

  /** The child node for `pe`, created when missing. */
  ensure(pe: string): FieldSet {
    this.children ??= new Map();
    let c = this.children.get(pe);
    if (!c) this.children.set(pe, (c = new FieldSet()));
    return c;
  }

  insert(path: readonly string[]): void {
    let n: FieldSet = this;
    for (const pe of path) n = n.ensure(pe);
    n.member = true;
  }

  has(path: readonly string[]): boolean {
    let n: FieldSet | undefined = this;
    for (const pe of path) n = n?.child(pe);
    return n?.member ?? false;
  }

  /** No member anywhere below (the root's own flag is not a path). */
  isEmpty(): boolean {
    if (!this.children) return true;
    for (const c of this.children.values()) if (c.member || !c.isEmpty()) return false;
    return true;
  }

  clone(): FieldSet {
    const out = new FieldSet();
    out.member = this.member;
    if (this.children) for (const [k, c] of this.children) out.ensure(k).copyFrom(c);
    return out;
  }

  private copyFrom(c: FieldSet): void {
    this.member = c.member;
    if (c.children) for (const [k, cc] of c.children) this.ensure(k).copyFrom(cc);
  }

  /** Paths of the members, in structured-merge-diff's iteration order (a node's members, then its children's). */
  paths(): string[][] {
    const out: string[][] = [];
    const walk = (n: FieldSet, prefix: string[]): void => {
      const keys = sortedKeys(n);
      for (const k of keys) if (n.children!.get(k)!.member) out.push([...prefix, k]);
      for (const k of keys) {
        const c = n.children!.get(k)!;
        if (c.children?.size) walk(c, [...prefix, k]);
      }
    };
    walk(this, []);
    return out;
  }

  equals(o: FieldSet): boolean {
    return JSON.stringify(this.toFieldsV1()) === JSON.stringify(o.toFieldsV1());
  }

  /**
   * The `fieldsV1` document of this set: `{}` for a member leaf, `".": {}` for a member with
   * children. Remembered per set (sets are not changed once built), and shared: do not modify it.
   */
  toFieldsV1(): Record<string, unknown> {
    let doc = encoded.get(this);
    if (!doc) encoded.set(this, (doc = this.encode()));
    return doc;
  }

  private encode(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    if (!this.children) return out;
    for (const k of sortedKeys(this)) {
      const c = this.children.get(k)!;
      const inner = c.toFieldsV1();
      const hasInner = Object.keys(inner).length > 0;
      if (!hasInner && !c.member) continue;
      out[k] = c.member && hasInner ? { '.': {}, ...inner } : inner;
    }
    return out;
  }

  static fromFieldsV1(doc: unknown): FieldSet {
    const out = new FieldSet();
    decodeInto(out, doc);
    return out;
  }
}

const encoded = new WeakMap<FieldSet, Record<string, unknown>>();

function decodeInto(n: FieldSet, doc: unknown): void {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('fieldsV1 must be an object');
  for (const [k, v] of Object.entries(doc)) {
    if (k === '.') {
      n.member = true;
      continue;
    }
    if (!/^[fkvi]:/.test(k)) throw new Error(`unexpected fieldsV1 key ${JSON.stringify(k)}`);
    const c = n.ensure(k);
    if (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0) c.member = true;
    else decodeInto(c, v);
  }
}

const PE_ORDER: Readonly<Record<string, number>> = { f: 0, k: 1, v: 2, i: 3 };

/** Path elements in structured-merge-diff's order: field names, then keys, then values, then indexes. */
export function comparePathElements(a: string, b: string): number {
  const ta = PE_ORDER[a[0]!] ?? 4;
  const tb = PE_ORDER[b[0]!] ?? 4;
  if (ta !== tb) return ta - tb;
  if (ta === 3) return Number(a.slice(2)) - Number(b.slice(2));
  return a < b ? -1 : a > b ? 1 : 0;
}

function sortedKeys(n: FieldSet): string[] {
  return n.children ? [...n.children.keys()].sort(comparePathElements) : [];
}

export function union(a: FieldSet, b: FieldSet): FieldSet {
  const out = a.clone();
  const add = (dst: FieldSet, src: FieldSet): void => {
    if (src.member) dst.member = true;
    if (src.children) for (const [k, c] of src.children) add(dst.ensure(k), c);
  };
  add(out, b);
  return out;
}

/** Members of `a` that are not members of `b` (exact paths, as fieldpath.Set.Difference); `a` itself when none is. */
export function difference(a: FieldSet, b: FieldSet): FieldSet {
  if (!b.children || !overlaps(a, b)) return a;
  return filter(a, b, (am, bn) => am && !(bn?.member ?? false), false);
}

/** Whether some member of `a` is a member of `b`. */
function overlaps(a: FieldSet, b: FieldSet): boolean {
  if (!a.children || !b.children) return false;
  const [small, large] = a.children.size <= b.children.size ? [a, b] : [b, a];
  for (const [k, c] of small.children!) {
    const o = large.children!.get(k);
    if (o && ((c.member && o.member) || overlaps(c, o))) return true;
  }
  return false;
}

/** Members of `a` that are also members of `b`. */
export function intersection(a: FieldSet, b: FieldSet): FieldSet {
  return filter(a, b, (am, bn) => am && (bn?.member ?? false), true);
}

/** Members of `a` neither in `b` nor below a member of `b` (fieldpath.Set.RecursiveDifference). */
export function recursiveDifference(a: FieldSet, b: FieldSet): FieldSet {
  const out = new FieldSet();
  const walk = (dst: FieldSet, an: FieldSet, bn: FieldSet | undefined): void => {
    if (!an.children) return;
    for (const [k, ac] of an.children) {
      const bc = bn?.child(k);
      if (bc?.member) continue;
      const d = new FieldSet();
      d.member = ac.member;
      walk(d, ac, bc);
      if (d.member || d.children?.size) (dst.children ??= new Map()).set(k, d);
    }
  };
  walk(out, a, b);
  return out;
}

function filter(
  a: FieldSet,
  b: FieldSet,
  keep: (aMember: boolean, bNode: FieldSet | undefined) => boolean,
  needB: boolean,
): FieldSet {
  const out = new FieldSet();
  const walk = (dst: FieldSet, an: FieldSet, bn: FieldSet | undefined): void => {
    if (!an.children) return;
    for (const [k, ac] of an.children) {
      const bc = bn?.child(k);
      if (needB && !bc) continue;
      const d = new FieldSet();
      d.member = keep(ac.member, bc);
      walk(d, ac, bc);
      if (d.member || d.children?.size) (dst.children ??= new Map()).set(k, d);
    }
  };
  walk(out, a, b);
  return out;
}

/**
 * A path as kube prints it in conflicts (fieldpath.Path.String): `.spec.replicas`,
 * `.spec.containers[name="nginx"].image`, `.metadata.finalizers[="a"]`, `[3]`.
 */
export function pathString(path: readonly string[]): string {
  let s = '';
  for (const pe of path) {
    const body = pe.slice(2);
    switch (pe[0]) {
      case 'f':
        s += `.${body}`;
        break;
      case 'k': {
        const keys = JSON.parse(body) as Record<string, unknown>;
        s += `[${Object.keys(keys)
          .map((k) => `${k}=${goValueString(keys[k])}`)
          .join(',')}]`;
        break;
      }
      case 'v':
        s += `[=${goValueString(JSON.parse(body))}]`;
        break;
      default:
        s += `[${body}]`;
    }
  }
  return s;
}

/** structured-merge-diff's value.ToString: strings quoted, the rest as JSON. */
function goValueString(v: unknown): string {
  return JSON.stringify(v);
}

/** The segments of a field path as strict decoding reports it: `spec.containers[0].name` → spec, containers, 0, name. */
export function fieldPathSegments(p: string): (string | number)[] {
  const segs: (string | number)[] = [];
  for (const m of p.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) segs.push(m[2] !== undefined ? Number(m[2]) : m[1]!);
  return segs;
}
