import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../resources/types.js';
import { formatNodeToken, parseNodeToken } from '../../kube/nodetoken.js';
import { authenticateNodeToken } from './tokens.js';

const SECRET = 'abcdefghijklmnopqrstuvwx';
const stored = (type = 'stowage.io/node-token', secret = SECRET): KubeObject => ({
  metadata: { name: 'node-token-n1.example', namespace: 'kube-system' },
  type,
  data: { 'token-secret': Buffer.from(secret).toString('base64') },
});
const lookup = (obj: KubeObject | undefined) => (ns: string, name: string) =>
  ns === 'kube-system' && name === 'node-token-n1.example' ? obj : undefined;

describe('per-node tokens', () => {
  it('a node name may hold dots; the secret is after the last one', () => {
    expect(parseNodeToken(formatNodeToken('n1.example', SECRET))).toEqual({ nodeName: 'n1.example', secret: SECRET });
    expect(parseNodeToken('n1.short')).toBeUndefined();
    expect(parseNodeToken(SECRET)).toBeUndefined();
  });

  it('authenticates the node its Secret names, as system:node:<name> in system:nodes', () => {
    expect(authenticateNodeToken(formatNodeToken('n1.example', SECRET), lookup(stored()))).toEqual({
      name: 'system:node:n1.example',
      groups: ['system:nodes'],
    });
  });

  it.each([
    ['a wrong secret', formatNodeToken('n1.example', 'zyxwvutsrqponmlkjihgfedc'), stored()],
    ['a deleted Secret (revoked)', formatNodeToken('n1.example', SECRET), undefined],
    ['a Secret of another type', formatNodeToken('n1.example', SECRET), stored('Opaque')],
    ["another node's name with this secret", formatNodeToken('n2', SECRET), stored()],
  ])('refuses %s', (_, token, obj) => {
    expect(authenticateNodeToken(token, lookup(obj))).toBeUndefined();
  });
});
