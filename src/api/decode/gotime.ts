/**
 * Go's `time.Parse` for the two layouts metav1 uses (Time: RFC 3339; MicroTime: RFC 3339 with
 * exactly six fractional digits), reduced to the question "does it parse, and if not, what does
 * Go say": kube-apiserver answers a bad timestamp with that text.
 */

export const RFC3339 = '2006-01-02T15:04:05Z07:00';
export const RFC3339_MICRO = '2006-01-02T15:04:05.000000Z07:00';

type Elem = 'year' | 'month' | 'day' | 'hour' | 'minute' | 'second' | 'micro' | 'zone';
/** The layout as Go splits it: literal prefix, then the element and its text in the layout. */
const STEPS: ReadonlyArray<readonly [prefix: string, elem: Elem, text: string]> = [
  ['', 'year', '2006'],
  ['-', 'month', '01'],
  ['-', 'day', '02'],
  ['T', 'hour', '15'],
  [':', 'minute', '04'],
  [':', 'second', '05'],
  ['', 'micro', '.000000'],
  ['', 'zone', 'Z07:00'],
];

const isDigit = (s: string, i: number): boolean => i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57;

/** Go's `getnum`: one or two digits (exactly two when `fixed`). */
function getnum(s: string, fixed: boolean): [number, string] | undefined {
  if (!isDigit(s, 0)) return undefined;
  if (!isDigit(s, 1)) return fixed ? undefined : [Number(s[0]), s.slice(1)];
  return [Number(s.slice(0, 2)), s.slice(2)];
}

function daysIn(month: number, year: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

const quote = (s: string): string => JSON.stringify(s);

/** The error Go's `time.Parse(layout, value)` returns, or undefined when the value parses. */
export function goTimeParseError(value: string, micro: boolean): string | undefined {
  const layout = micro ? RFC3339_MICRO : RFC3339;
  const fail = (elem: string, rest: string): string =>
    `parsing time ${quote(value)} as ${quote(layout)}: cannot parse ${quote(rest)} as ${quote(elem)}`;
  const range = (what: string): string => `parsing time ${quote(value)}: ${what} out of range`;
  let v = value;
  let year = 0;
  let month = 0;
  let day = 0;
  for (const [prefix, elem, text] of STEPS) {
    if (elem === 'micro' && !micro) continue;
    if (prefix) {
      if (!v.startsWith(prefix)) return fail(prefix, v);
      v = v.slice(prefix.length);
    }
    const hold = v;
    switch (elem) {
      case 'year': {
        if (v.length < 4 || !/^[+-]?\d+$/.test(v.slice(0, 4))) return fail(text, hold);
        year = Number(v.slice(0, 4));
        v = v.slice(4);
        break;
      }
      case 'month':
      case 'day':
      case 'hour':
      case 'minute':
      case 'second': {
        const r = getnum(v, elem !== 'hour');
        if (!r) return fail(text, hold);
        const [n, rest] = r;
        v = rest;
        if (elem === 'month' && (n < 1 || n > 12)) return range('month');
        if (elem === 'hour' && n >= 24) return range('hour');
        if ((elem === 'minute' || elem === 'second') && n >= 60) return range(elem);
        if (elem === 'month') month = n;
        if (elem === 'day') day = n;
        // A fraction the layout does not name is still accepted after the seconds.
        if (elem === 'second' && !micro && v.length >= 2 && (v[0] === '.' || v[0] === ',') && isDigit(v, 1)) {
          let n2 = 2;
          while (isDigit(v, n2)) n2++;
          v = v.slice(n2);
        }
        break;
      }
      case 'micro': {
        if (v.length < 7 || (v[0] !== '.' && v[0] !== ',') || !/^\d{6}$/.test(v.slice(1, 7))) return fail(text, hold);
        v = v.slice(7);
        break;
      }
      case 'zone': {
        if (v.startsWith('Z')) {
          v = v.slice(1);
          break;
        }
        if (
          v.length < 6 ||
          v[3] !== ':' ||
          (v[0] !== '+' && v[0] !== '-') ||
          !/^\d\d$/.test(v.slice(1, 3)) ||
          !/^\d\d$/.test(v.slice(4, 6))
        )
          return fail(text, hold);
        v = v.slice(6);
        break;
      }
    }
  }
  if (v.length) return `parsing time ${quote(value)}: extra text: ${quote(v)}`;
  if (day < 1 || day > daysIn(month, year)) return range('day');
  return undefined;
}
