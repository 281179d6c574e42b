/**
 * kube-apiserver's --token-auth-file: a CSV of `token,user,uid[,"group1,group2"]`, one line per
 * token; blank lines and lines starting with '#' are skipped. A malformed line is an error naming it.
 */
import type { UserInfo } from './server.js';

/** Splits one CSV record (double quotes group commas; `""` inside quotes is a quote). */
export function splitCsvLine(line: string): string[] {
  const fields: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cur += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      fields.push(cur);
      cur = '';
    } else cur += c;
  }
  if (quoted) throw new Error('unterminated quote');
  fields.push(cur);
  return fields;
}

export function parseTokenAuthFile(text: string): Map<string, UserInfo> {
  const tokens = new Map<string, UserInfo>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    let f: string[];
    try {
      f = splitCsvLine(line);
    } catch (e) {
      throw new Error(`token file line ${i + 1}: ${(e as Error).message}`);
    }
    if (f.length < 3)
      throw new Error(`token file line ${i + 1}: want token,user,uid[,"groups"], got ${f.length} fields`);
    const [token, name] = [f[0]!.trim(), f[1]!.trim()];
    if (token === '' || name === '') throw new Error(`token file line ${i + 1}: empty token or user name`);
    const groups =
      f.length > 3
        ? f[3]!
            .split(',')
            .map((g) => g.trim())
            .filter((g) => g !== '')
        : [];
    tokens.set(token, { name, groups });
  });
  return tokens;
}
