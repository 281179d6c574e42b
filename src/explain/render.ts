/** An explanation in plain sentences, as `stowage why` prints it. */
import type { Explanation, ObjectRef } from './types.js';

const SHORT: Readonly<Record<string, string>> = {
  PersistentVolumeClaim: 'pvc',
  PersistentVolume: 'pv',
  Pod: 'pod',
  VolumeAttachment: 'volumeattachment',
  Node: 'node',
};

export function refText(r: ObjectRef): string {
  const kind = SHORT[r.kind] ?? r.kind.toLowerCase();
  return r.namespace ? `${kind}/${r.name} -n ${r.namespace}` : `${kind}/${r.name}`;
}

export function renderExplanation(e: Explanation): string {
  const t = e.target;
  const head = `${SHORT[t.kind] ?? t.kind}/${t.name}${t.namespace ? ` in namespace ${t.namespace}` : ''} is ${e.state}: ${e.summary}.`;
  const lines = [head.replace(/\.\.$/, '.')];
  if (e.findings.length > 0) {
    lines.push(e.ready ? 'Notes:' : 'Why:');
    for (const f of e.findings) lines.push(`  - ${f.message}`);
  }
  const related = e.related ?? [];
  if (related.length > 0) lines.push(`See also: ${related.map((r) => `stowage why ${refText(r)}`).join('; ')}`);
  return `${lines.join('\n')}\n`;
}
