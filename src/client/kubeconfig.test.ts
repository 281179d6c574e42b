import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BadRequestError } from '../util/errors.js';
import { loadKubeconfig } from './kubeconfig.js';

const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const write = (name: string, text: string): string => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

const doc = (extra: { cluster?: string; user?: string; current?: string } = {}): string => `apiVersion: v1
kind: Config
clusters:
- name: other
  cluster:
    server: https://10.0.0.1:6443
- name: main
  cluster:
    server: https://127.0.0.1:6443
${extra.cluster ?? `    certificate-authority-data: ${Buffer.from('-----BEGIN CERTIFICATE-----\nX\n-----END CERTIFICATE-----\n').toString('base64')}`}
users:
- name: admin
  user:
${extra.user ?? '    token: secret-token'}
contexts:
- name: ctx
  context:
    cluster: main
    user: admin
current-context: ${extra.current ?? 'ctx'}
`;

describe('loadKubeconfig', () => {
  it('follows current-context to the cluster server, CA data and token', async () => {
    const cfg = await loadKubeconfig(write('a', doc()));
    expect(cfg).toEqual({
      server: 'https://127.0.0.1:6443',
      token: 'secret-token',
      caPem: '-----BEGIN CERTIFICATE-----\nX\n-----END CERTIFICATE-----\n',
      insecure: false,
    });
  });

  it('reads certificate-authority and tokenFile relative to the kubeconfig', async () => {
    write('ca.crt', 'CA-PEM');
    write('token', 'file-token\n');
    const cfg = await loadKubeconfig(
      write(
        'b',
        doc({
          cluster: '    certificate-authority: ca.crt\n    insecure-skip-tls-verify: true',
          user: '    tokenFile: token',
        }),
      ),
    );
    expect(cfg).toMatchObject({ caPem: 'CA-PEM', token: 'file-token', insecure: true });
  });

  it.each([
    { name: 'unknown context', text: doc({ current: 'nope' }) },
    { name: 'no token', text: doc({ user: '    username: x' }) },
    { name: 'not a mapping', text: '- a\n- b\n' },
  ])('rejects $name', async ({ text, name }) => {
    await expect(loadKubeconfig(write(name.replace(/ /g, '_'), text))).rejects.toBeInstanceOf(BadRequestError);
  });
});
