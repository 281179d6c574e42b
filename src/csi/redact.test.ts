import { describe, expect, it } from 'vitest';
import { csiProto } from './proto/index.js';
import { redactSecrets, STRIPPED } from './redact.js';

interface MethodDef {
  readonly path: string;
  readonly requestType?: { type?: { field?: ReadonlyArray<{ name: string }> } };
}

/** Every CSI method whose request has a `secrets` field, read from our proto. */
function methodsWithSecrets(): string[] {
  const v1 = csiProto().csi.v1 as unknown as Record<string, { service?: Record<string, MethodDef> } | undefined>;
  const out: string[] = [];
  for (const svc of ['Identity', 'Controller', 'Node', 'GroupController']) {
    for (const def of Object.values(v1[svc]?.service ?? {}))
      if (def.requestType?.type?.field?.some((f) => f.name === 'secrets')) out.push(def.path);
  }
  return out.sort();
}

describe('redactSecrets', () => {
  it('covers the CSI requests that carry secrets', () => {
    expect(methodsWithSecrets()).toEqual(
      expect.arrayContaining([
        '/csi.v1.Controller/ControllerExpandVolume',
        '/csi.v1.Controller/ControllerPublishVolume',
        '/csi.v1.Controller/ControllerUnpublishVolume',
        '/csi.v1.Controller/CreateSnapshot',
        '/csi.v1.Controller/CreateVolume',
        '/csi.v1.Controller/DeleteSnapshot',
        '/csi.v1.Controller/DeleteVolume',
        '/csi.v1.Controller/ListSnapshots',
        '/csi.v1.Controller/ValidateVolumeCapabilities',
        '/csi.v1.Node/NodeExpandVolume',
        '/csi.v1.Node/NodePublishVolume',
        '/csi.v1.Node/NodeStageVolume',
      ]),
    );
  });

  it.each(methodsWithSecrets())('strips every secret of a %s request and keeps the rest', (method) => {
    const req = {
      volumeId: 'v1',
      name: 'pvc-1',
      secrets: { password: 'hunter2', token: 's3cr3t' },
      parameters: { a: 'b' },
    };
    const out = redactSecrets(req);
    expect(out).toEqual({ ...req, secrets: { password: STRIPPED, token: STRIPPED } });
    expect(JSON.stringify(out)).not.toMatch(/hunter2|s3cr3t/);
    expect(req.secrets.password).toBe('hunter2'); // the request itself is untouched
    expect(method).toMatch(/^\/csi\.v1\./);
  });

  it('strips nested secrets maps too, and renders bytes as base64', () => {
    expect(redactSecrets({ a: [{ secrets: { k: 'v' } }], b: Buffer.from('hi') })).toEqual({
      a: [{ secrets: { k: STRIPPED } }],
      b: 'aGk=',
    });
  });
});
