import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { csiProto } from '../csi/proto/index.js';
import * as grpc from '@grpc/grpc-js';
import { hostpathCommand } from './csi-hostpath.js';

function newProgram(): Command {
  const program = new Command()
    .exitOverride()
    .configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  hostpathCommand(program);
  return program;
}

describe('stowage csi-hostpath', () => {
  let tmp = '';
  afterAll(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it.each([
    { name: 'missing --node-id', args: ['--endpoint', 'unix:///tmp/x.sock', '--state-dir', '/tmp/x'] },
    {
      name: 'bad --max-volumes-per-node',
      args: [
        '--endpoint',
        'unix:///tmp/x.sock',
        '--node-id',
        'n',
        '--state-dir',
        '/tmp/x',
        '--max-volumes-per-node',
        '-1',
      ],
    },
    {
      name: 'bad --capacity',
      args: ['--endpoint', 'unix:///tmp/x.sock', '--node-id', 'n', '--state-dir', '/tmp/x', '--capacity', '10G'],
    },
  ])('refuses $name', async ({ args }) => {
    await expect(newProgram().parseAsync(['csi-hostpath', ...args], { from: 'user' })).rejects.toThrow();
  });

  it('serves on the endpoint with the flags given and stops on SIGTERM, removing its socket', async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'stowage-hostpath-cmd-'));
    const sock = path.join(tmp, 'csi.sock');
    const run = newProgram().parseAsync(
      [
        'csi-hostpath',
        '--endpoint',
        `unix://${sock}`,
        '--node-id',
        'cli-node',
        '--state-dir',
        path.join(tmp, 'state'),
        '--driver-name',
        'x.example.com',
        '--max-volumes-per-node',
        '3',
      ],
      { from: 'user' },
    );
    const v1 = csiProto().csi.v1;
    const node = new v1.Node(`unix:${sock}`, grpc.credentials.createInsecure());
    const identity = new v1.Identity(`unix:${sock}`, grpc.credentials.createInsecure());
    let info: { nodeId: string; maxVolumesPerNode: number };
    try {
      await new Promise<void>((resolve, reject) =>
        node.waitForReady(Date.now() + 20_000, (e) => (e ? reject(e) : resolve())),
      );
      info = await new Promise((resolve, reject) => node.NodeGetInfo({}, (e, r) => (e || !r ? reject(e) : resolve(r))));
    } catch (e) {
      process.emit('SIGTERM');
      await run;
      throw e;
    }
    expect(info).toMatchObject({ nodeId: 'cli-node', maxVolumesPerNode: 3 });
    const name = await new Promise<string>((resolve, reject) =>
      identity.GetPluginInfo({}, (e, r) => (e || !r ? reject(e) : resolve(r.name))),
    );
    expect(name).toBe('x.example.com');
    node.close();
    identity.close();
    process.emit('SIGTERM');
    await run;
    await expect(stat(sock)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
