import { describe, expect, it } from 'vitest';
import { bodyFormat, negotiateResponse, PROTOBUF_UNSUPPORTED, type NegotiateOptions } from './negotiation.js';
import { ApiNotAcceptableError, ApiUnsupportedMediaTypeError, toStatus } from './status.js';

const KUBE_406 =
  '406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf';
const KUBE_415 =
  'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf';
const KUBECTL_GET =
  'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
const CLIENT_GO_PROTOBUF = 'application/vnd.kubernetes.protobuf,application/json';

function refusal(f: () => unknown): { code: number; reason?: string; message?: string } {
  try {
    f();
  } catch (e) {
    return toStatus(e);
  }
  throw new Error('expected a refusal');
}

describe('bodyFormat (Content-Type of a create or update)', () => {
  it.each([
    { contentType: undefined, want: 'json' },
    { contentType: '', want: 'json' },
    { contentType: 'application/json', want: 'json' },
    { contentType: 'Application/JSON; charset=utf-8', want: 'json' },
    { contentType: 'application/yaml', want: 'yaml' },
    { contentType: 'application/vnd.kubernetes.protobuf', want: 'protobuf' },
  ] as const)('$contentType → $want', ({ contentType, want }) => {
    expect(bodyFormat(contentType)).toBe(want);
  });

  it.each(['text/plain', 'application/xml', 'application/merge-patch+json', 'text/yaml', '*/*'])(
    '%s → 415 with kube-apiserver message',
    (ct) => {
      expect(() => bodyFormat(ct)).toThrow(ApiUnsupportedMediaTypeError);
      expect(refusal(() => bodyFormat(ct))).toMatchObject({
        code: 415,
        reason: 'UnsupportedMediaType',
        message: KUBE_415,
      });
    },
  );

  it('names what it reads in the 415 for a protobuf body it does not decode', () => {
    expect(PROTOBUF_UNSUPPORTED).toContain('accepted media types include: application/json, application/yaml');
    expect(PROTOBUF_UNSUPPORTED).not.toMatch(/include: .*protobuf/);
  });
});

describe('negotiateResponse (Accept)', () => {
  const read: NegotiateOptions = { table: true };
  const watch: NegotiateOptions = { table: true, stream: true };
  it.each([
    { name: 'no Accept', accept: undefined, o: read, want: 'json' },
    { name: 'JSON', accept: 'application/json', o: read, want: 'json' },
    { name: 'any', accept: '*/*', o: read, want: 'json' },
    { name: 'application/*', accept: 'application/*', o: read, want: 'json' },
    { name: 'kubectl get asks a Table', accept: KUBECTL_GET, o: read, want: 'table' },
    { name: 'a Table where none is served falls back to JSON', accept: KUBECTL_GET, o: {}, want: 'json' },
    { name: 'client-go: protobuf alongside JSON', accept: CLIENT_GO_PROTOBUF, o: read, want: 'json' },
    { name: 'client-go watch: protobuf alongside JSON', accept: CLIENT_GO_PROTOBUF, o: watch, want: 'json' },
    { name: 'YAML', accept: 'application/yaml', o: read, want: 'yaml' },
    { name: 'first producible wins', accept: 'text/html, application/yaml, application/json', o: read, want: 'yaml' },
    {
      name: 'YAML cannot stream: a watch falls to JSON',
      accept: 'application/yaml, application/json',
      o: watch,
      want: 'json',
    },
    { name: 'q=0 is a refusal', accept: 'application/json;q=0, application/yaml', o: read, want: 'yaml' },
    { name: 'watch stream parameter', accept: 'application/json;stream=watch', o: watch, want: 'json' },
  ] as const)('$name → $want', ({ accept, o, want }) => {
    expect(negotiateResponse(accept, o)).toBe(want);
  });

  it.each([
    { name: 'text/html', accept: 'text/html', o: read },
    { name: 'an unknown "as"', accept: 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io', o: read },
    { name: 'YAML on a watch', accept: 'application/yaml', o: watch },
  ])('$name → 406 with kube-apiserver message', ({ accept, o }) => {
    expect(() => negotiateResponse(accept, o)).toThrow(ApiNotAcceptableError);
    expect(refusal(() => negotiateResponse(accept, o))).toMatchObject({
      code: 406,
      reason: 'NotAcceptable',
      message: KUBE_406,
    });
  });

  it('answers protobuf as the only choice with 406 naming JSON', () => {
    const s = refusal(() => negotiateResponse('application/vnd.kubernetes.protobuf', read));
    expect(s).toMatchObject({ code: 406, reason: 'NotAcceptable' });
    expect(s.message).toContain('application/json');
    expect(s.message).not.toContain('protobuf');
  });
});
