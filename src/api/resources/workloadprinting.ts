/** The `-o wide` columns kube's printers give workloads: the template's containers and images (and a selector). */
import { formatLabelSelector, labelSelectorFromObject, type LabelSelectorObject } from '../../kube/selectors.js';
import { listAt, objectAt, strAt } from './corehelpers.js';
import { column } from './printing.js';
import type { KubeObject, TableColumn } from './types.js';

/** CONTAINERS, IMAGES and (when given its description: kube uses the kind's spec.selector doc) SELECTOR. */
export function wideWorkloadColumns(opts: { selectorDoc?: string } = {}): TableColumn[] {
  return [
    column('Containers', 'Names of each container in the template.', { wide: true }),
    column('Images', 'Images referenced by each container in the template.', { wide: true }),
    ...(opts.selectorDoc !== undefined ? [column('Selector', opts.selectorDoc, { wide: true })] : []),
  ];
}

/** CONTAINERS and IMAGES cells: the template's containers' names and images, comma-separated. */
export function containersAndImages(o: KubeObject): [string, string] {
  const containers = listAt(objectAt(objectAt(objectAt(o, 'spec'), 'template'), 'spec'), 'containers');
  return [containers.map((c) => strAt(c, 'name')).join(','), containers.map((c) => strAt(c, 'image')).join(',')];
}

/** The SELECTOR cell: `metav1.FormatLabelSelector` of spec.selector (`<none>` when absent or empty). */
export function selectorCell(o: KubeObject): string {
  const sel = objectAt(objectAt(o, 'spec'), 'selector');
  if (!sel) return '<none>';
  try {
    const text = formatLabelSelector(labelSelectorFromObject(sel as LabelSelectorObject));
    return text === '' ? '<none>' : text;
  } catch {
    return '<error>';
  }
}
