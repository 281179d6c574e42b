/**
 * Work-queue keys of the attach/detach controller: one per volume-node pair (its attachment and
 * the node's volumesAttached), one per node (volumesAttached alone). A failure requeues only its
 * own key. PV and node names are DNS subdomains, so '/' never occurs inside them.
 */
export type AttachKey =
  | { readonly kind: 'pair'; readonly pvName: string; readonly nodeName: string }
  | { readonly kind: 'node'; readonly nodeName: string };

export function pairKey(pvName: string, nodeName: string): string {
  return `volume/${pvName}/${nodeName}`;
}

export function nodeKey(nodeName: string): string {
  return `node/${nodeName}`;
}

export function parseAttachKey(key: string): AttachKey | undefined {
  const parts = key.split('/');
  if (parts[0] === 'volume' && parts.length === 3 && parts[1] && parts[2])
    return { kind: 'pair', pvName: parts[1], nodeName: parts[2] };
  if (parts[0] === 'node' && parts.length === 2 && parts[1]) return { kind: 'node', nodeName: parts[1] };
  return undefined;
}
