import { describe, expect, it } from 'vitest';
import { imageLocation, pullAuths, type PullSecret } from './pull-secrets.js';

const dockerconfig = (auths: Record<string, object>): PullSecret => ({
  type: 'kubernetes.io/dockerconfigjson',
  data: { '.dockerconfigjson': JSON.stringify({ auths }) },
});
const b64 = (s: string): string => Buffer.from(s).toString('base64');

describe('imagePullSecrets → CRI AuthConfig', () => {
  it.each([
    { image: 'busybox', want: { host: 'docker.io', path: 'library/busybox' } },
    { image: 'me/app:1', want: { host: 'docker.io', path: 'me/app' } },
    { image: '127.0.0.1:5000/team/app:t1', want: { host: '127.0.0.1:5000', path: 'team/app' } },
    { image: 'registry.example.com/app@sha256:abc', want: { host: 'registry.example.com', path: 'app' } },
    { image: 'localhost/app', want: { host: 'localhost', path: 'app' } },
  ])('$image is at $want', ({ image, want }) => {
    expect(imageLocation(image)).toEqual(want);
  });

  it('matches the registry by host (and port), most specific path first; auth is decoded into username/password', () => {
    const secrets = [
      dockerconfig({
        'http://127.0.0.1:5000/v2/': { auth: b64('alice:pw1') },
        '127.0.0.1:5001': { username: 'x', password: 'y' },
      }),
      dockerconfig({ '127.0.0.1:5000/team': { username: 'bob', password: 'pw2' } }),
    ];
    expect(pullAuths('127.0.0.1:5000/team/app:t1', secrets)).toEqual([
      { username: 'bob', password: 'pw2', auth: '', serverAddress: '', identityToken: '', registryToken: '' },
      {
        username: 'alice',
        password: 'pw1',
        auth: b64('alice:pw1'),
        serverAddress: '',
        identityToken: '',
        registryToken: '',
      },
    ]);
    expect(pullAuths('127.0.0.1:5000/other/app:t1', secrets).map((a) => a.username)).toEqual(['alice']);
    expect(pullAuths('127.0.0.1:5002/team/app:t1', secrets)).toEqual([]);
  });

  it('globs match one host label; docker hub keys match bare images; other secret types are ignored', () => {
    expect(
      pullAuths('eu.registry.example.com/app', [
        dockerconfig({ '*.registry.example.com': { username: 'g', password: 'p' } }),
      ]).map((a) => a.username),
    ).toEqual(['g']);
    expect(
      pullAuths('a.b.registry.example.com/app', [
        dockerconfig({ '*.registry.example.com': { username: 'g', password: 'p' } }),
      ]),
    ).toEqual([]);
    expect(
      pullAuths('busybox', [dockerconfig({ 'https://index.docker.io/v1/': { username: 'hub', password: 'p' } })]).map(
        (a) => a.username,
      ),
    ).toEqual(['hub']);
    expect(pullAuths('busybox', [{ type: 'Opaque', data: { '.dockerconfigjson': '{}' } }])).toEqual([]);
    const legacy: PullSecret = {
      type: 'kubernetes.io/dockercfg',
      data: { '.dockercfg': JSON.stringify({ 'reg.example.com': { username: 'old', password: 'p' } }) },
    };
    expect(pullAuths('reg.example.com/app', [legacy]).map((a) => a.username)).toEqual(['old']);
  });
});
