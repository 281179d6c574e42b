import { describe, expect, it } from 'vitest';
import { decodeProtobufBody } from './protobody.js';
import { toStatus } from './status.js';

describe('protobuf request bodies', () => {
  // The bytes kubectl 1.33 sends for `auth can-i create pods --subresource=eviction -n ns1` (its -v=8 log).
  it('decodes a SelfSubjectAccessReview as kubectl sends it', () => {
    const raw = Buffer.from(
      '0a100a0012001a0022002a003200380042001225' +
        '0a230a036e73311206637265617465' +
        '1a0022002a04706f647332086576696374696f6e3a00',
      'hex',
    );
    const tm = Buffer.from(
      '0a320a17617574686f72697a6174696f6e2e6b38732e696f2f76311217' +
        Buffer.from('SelfSubjectAccessReview').toString('hex'),
      'hex',
    );
    const body = Buffer.concat([Buffer.from('6b387300', 'hex'), tm, Buffer.from([0x12, raw.length]), raw]);
    expect(decodeProtobufBody(body, 'no')).toEqual({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      metadata: {},
      spec: { resourceAttributes: { namespace: 'ns1', verb: 'create', resource: 'pods', subresource: 'eviction' } },
    });
  });

  it('answers 415 for a kind it does not decode', () => {
    const tm = Buffer.concat([
      Buffer.from([0x0a, 0x0a, 0x0a, 0x02]),
      Buffer.from('v1'),
      Buffer.from([0x12, 0x04]),
      Buffer.from('Node'),
    ]);
    const body = Buffer.concat([Buffer.from('6b387300', 'hex'), tm]);
    expect(() => decodeProtobufBody(body, 'not decoded')).toThrow('not decoded');
    expect(
      toStatus(
        (() => {
          try {
            decodeProtobufBody(body, 'x');
          } catch (e) {
            return e;
          }
          return undefined;
        })(),
      ).code,
    ).toBe(415);
  });
});
