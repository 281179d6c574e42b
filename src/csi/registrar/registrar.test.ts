import { describe, it, expect } from 'vitest';
import { parseHostPort } from './healthz.js';
import { pluginInfo } from './service.js';

describe('parseHostPort', () => {
  it.each([
    { in: ':9809', want: { port: 9809 } },
    { in: '127.0.0.1:0', want: { host: '127.0.0.1', port: 0 } },
    { in: '[::1]:80', want: { host: '::1', port: 80 } },
  ])('$in', ({ in: s, want }) => expect(parseHostPort(s)).toEqual(want));
  it.each(['9809', 'h:99999', 'h:x'])('rejects %j', (s) => expect(() => parseHostPort(s)).toThrow());
});

describe('pluginInfo', () => {
  it('is what node-driver-registrar returns from GetInfo', () => {
    expect(
      pluginInfo({ driverName: 'd.example.com', kubeletRegistrationPath: '/var/lib/kubelet/plugins/d/csi.sock' }),
    ).toEqual({
      type: 'CSIPlugin',
      name: 'd.example.com',
      endpoint: '/var/lib/kubelet/plugins/d/csi.sock',
      supportedVersions: ['1.0.0'],
    });
  });
});
