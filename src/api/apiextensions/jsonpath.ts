/**
 * The JSONPath subset printer columns and selectable fields use (client-go's jsonpath on
 * `{<path>}`): `.a.b`, `['a.b']`, `[0]`, `[-1]`, `[*]`, and filters `[?(@.type=="Ready")]`.
 * Evaluates to every matching value (a column joins several with ',').
 */

type Step =
  | { kind: 'field'; name: string }
  | { kind: 'index'; index: number }
  | { kind: 'all' }
  | { kind: 'filter'; path: string[]; op: '==' | '!=' | 'exists'; value?: unknown };

export class JsonPathError extends Error {}

const cache = new Map<string, Step[]>();

/** Parses a path; throws JsonPathError for syntax it does not know. */
export function parseJsonPath(path: string): Step[] {
  const hit = cache.get(path);
  if (hit) return hit;
  let p = path.trim();
  if (p.startsWith('{') && p.endsWith('}')) p = p.slice(1, -1);
  if (p.startsWith('$')) p = p.slice(1);
  const steps: Step[] = [];
  let i = 0;
  while (i < p.length) {
    const c = p[i];
    if (c === '.') {
      const m = /^\.([A-Za-z0-9_\-$]+)/.exec(p.slice(i));
      if (!m?.[1]) throw new JsonPathError(`unrecognized character in ${path} at ${i}`);
      steps.push({ kind: 'field', name: m[1] });
      i += m[0].length;
    } else if (c === '[') {
      const end = matchingBracket(p, i);
      const inner = p.slice(i + 1, end).trim();
      steps.push(bracketStep(inner, path));
      i = end + 1;
    } else {
      throw new JsonPathError(`unrecognized character in ${path} at ${i}`);
    }
  }
  cache.set(path, steps);
  return steps;
}

function matchingBracket(p: string, start: number): number {
  let depth = 0;
  let quote: string | undefined;
  for (let i = start; i < p.length; i++) {
    const c = p[i];
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[') depth++;
    else if (c === ']' && --depth === 0) return i;
  }
  throw new JsonPathError(`unterminated [ in ${p}`);
}

function bracketStep(inner: string, path: string): Step {
  if (inner === '*') return { kind: 'all' };
  if (/^-?\d+$/.test(inner)) return { kind: 'index', index: Number(inner) };
  const quoted = /^(['"])(.*)\1$/.exec(inner);
  if (quoted) return { kind: 'field', name: quoted[2] ?? '' };
  const f = /^\?\(@((?:\.[A-Za-z0-9_\-$]+)+)\s*(?:(==|!=)\s*(.+))?\)$/.exec(inner);
  if (f?.[1]) {
    const fieldPath = f[1].split('.').filter(Boolean);
    if (!f[2]) return { kind: 'filter', path: fieldPath, op: 'exists' };
    return { kind: 'filter', path: fieldPath, op: f[2] as '==' | '!=', value: literal(f[3] ?? '') };
  }
  throw new JsonPathError(`unsupported expression [${inner}] in ${path}`);
}

function literal(s: string): unknown {
  const t = s.trim();
  const q = /^(['"])(.*)\1$/.exec(t);
  if (q) return q[2];
  if (t === 'true' || t === 'false') return t === 'true';
  if (t !== '' && !Number.isNaN(Number(t))) return Number(t);
  return t;
}

function child(v: unknown, name: string): unknown {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>)[name] : undefined;
}

/** Every value `path` selects in `root` (missing fields select nothing). */
export function evalJsonPath(root: unknown, path: string): unknown[] {
  let cur: unknown[] = [root];
  for (const s of parseJsonPath(path)) {
    const next: unknown[] = [];
    for (const v of cur) {
      switch (s.kind) {
        case 'field': {
          const c = child(v, s.name);
          if (c !== undefined) next.push(c);
          break;
        }
        case 'index':
          if (Array.isArray(v)) {
            const x: unknown = v[s.index < 0 ? v.length + s.index : s.index];
            if (x !== undefined) next.push(x);
          }
          break;
        case 'all':
          if (Array.isArray(v)) next.push(...(v as unknown[]));
          else if (v && typeof v === 'object') next.push(...Object.values(v));
          break;
        case 'filter':
          if (Array.isArray(v)) for (const item of v as unknown[]) if (filterMatches(item, s)) next.push(item);
          break;
      }
    }
    cur = next;
  }
  return cur;
}

function filterMatches(item: unknown, s: Extract<Step, { kind: 'filter' }>): boolean {
  let v: unknown = item;
  for (const f of s.path) v = child(v, f);
  if (s.op === 'exists') return v !== undefined;
  const eq = v === s.value || (v !== undefined && String(v) === String(s.value));
  return s.op === '==' ? eq : !eq;
}
