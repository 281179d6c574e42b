/**
 * Go's `base64.StdEncoding` (what `encoding/json` uses for `[]byte`): standard alphabet, padding
 * required, CR and LF ignored. Returns where Go's decoder stops (kube-apiserver answers
 * `illegal base64 data at input byte N`), or -1 when the text decodes.
 */
export function base64ErrorAt(s: string): number {
  const text = s.includes('\n') || s.includes('\r') ? s.replace(/[\r\n]/g, '') : s;
  let i = 0;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 61 /* = */) break;
    if (!isAlphabet(c)) return i;
  }
  const inQuantum = i % 4;
  if (i === text.length) return inQuantum === 0 ? -1 : i - inQuantum;
  // Padding: only after 2 or 3 data characters, filling the quantum, at the very end.
  if (inQuantum < 2) return i;
  let end = i + 1;
  if (inQuantum === 2) {
    if (end >= text.length) return text.length; // "==" expected, input ends
    if (text.charCodeAt(end) !== 61) return i;
    end++;
  }
  return end === text.length ? -1 : end;
}

function isAlphabet(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47;
}
