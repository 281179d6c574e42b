import { status as Status } from '@grpc/grpc-js';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createData, growFile } from './fsops.js';

const dir = mkdtempSync(join(tmpdir(), 'stowage-fsops-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// 4 PiB: past ext4's 16 TiB and, as a sparse file, harmless where a filesystem allows it.
const HUGE = 2 ** 52;

describe('backing files', () => {
  it('a sparse file of the size asked for; growing never shrinks', async () => {
    const p = join(dir, 'small');
    await createData('file', p, 1 << 20);
    expect(statSync(p).size).toBe(1 << 20);
    await growFile(p, 1 << 10);
    expect(statSync(p).size).toBe(1 << 20);
  });

  it('a size the filesystem cannot hold is OUT_OF_RANGE, not INTERNAL: EFBIG', async () => {
    const p = join(dir, 'huge');
    let code: number | undefined;
    try {
      await createData('file', p, HUGE);
    } catch (e) {
      code = (e as { grpcCode?: number }).grpcCode;
    }
    // On a filesystem that holds 4 PiB files (xfs, tmpfs) the call succeeds; ext4 refuses with EFBIG.
    if (code === undefined) expect(statSync(p).size).toBe(HUGE);
    else expect(code).toBe(Status.OUT_OF_RANGE);
  });
});
