/**
 * The dashboard in a real headless browser (Debian's chromium over the DevTools protocol): log in
 * with the token, watch a claim go Pending → Bound live, open it (its reason, volume and CSI calls),
 * and see the reason of a claim that cannot bind. STOWAGE_SCREENSHOTS=<dir> keeps the screenshots.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { built, hasKubectl, isRoot } from './helpers/env.js';
import { kubectlIn } from './helpers/kubectl.js';
import { mountsUnder } from './helpers/mounts.js';
import { launchChromium } from './helpers/cdp.js';
import { startUp } from './helpers/up.js';

const hasChromium = ((): boolean => {
  try {
    execFileSync('chromium', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const CLAIMS = `apiVersion: v1
kind: PersistentVolumeClaim
metadata: { name: data }
spec: { accessModes: [ReadWriteOnce], storageClassName: fast, resources: { requests: { storage: 1Gi } } }
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: { name: stuck }
spec: { accessModes: [ReadWriteOnce], storageClassName: missing, resources: { requests: { storage: 1Gi } } }
`;
const CLASS = `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: { name: fast }
provisioner: hostpath.csi.stowage.io
volumeBindingMode: Immediate
`;

describe.skipIf(!isRoot || !hasKubectl || !built || !hasChromium)('dashboard in headless chromium', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('logs in, follows a claim live to Bound, shows its CSI calls and why another is stuck', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'stowage-ui-'));
    dirs.push(dataDir);
    const shots = process.env.STOWAGE_SCREENSHOTS ?? join(dataDir, 'screenshots');
    mkdirSync(shots, { recursive: true });
    const { child, exit, target } = await startUp(dataDir, 'ui');
    const browser = await launchChromium();
    try {
      const { kubectl } = kubectlIn(() => dataDir, 60_000);
      const page = await browser.open(`${target.baseUrl}/dashboard`);
      const text = (sel: string): Promise<string> =>
        page.evaluate<string>(`document.querySelector(${JSON.stringify(sel)})?.textContent ?? ''`);
      const row = (name: string): Promise<string> => text(`#persistentvolumeclaims tr[data-name="${name}"]`);

      // Login: the page holds no data until given a token.
      await expect
        .poll(() => page.evaluate<boolean>(`!!document.querySelector('#token')`), { timeout: 20_000 })
        .toBe(true);
      await page.evaluate(
        `document.querySelector('#token').value = ${JSON.stringify(target.token)}; document.querySelector('form').requestSubmit()`,
      );
      await expect.poll(() => text('#nodes tbody'), { timeout: 20_000 }).toContain('ui');
      await expect.poll(() => text('#csinodes tbody'), { timeout: 20_000 }).toContain('hostpath.csi.stowage.io');

      // A claim whose class does not exist yet: Pending, live.
      const claims = join(dataDir, 'claims.yaml');
      writeFileSync(claims, CLAIMS);
      await kubectl('apply', '-f', claims);
      await expect.poll(() => row('data'), { timeout: 20_000 }).toContain('Pending');
      await page.evaluate(`location.hash = 'claim=default/data'`);
      await expect
        .poll(() => text('#why'), { timeout: 20_000 })
        .toContain('storageclass.storage.k8s.io "fast" not found');
      writeFileSync(join(shots, 'claim-pending.png'), await page.screenshot());

      // The class arrives: the same page shows it Bound, with its volume and CSI calls.
      const cls = join(dataDir, 'class.yaml');
      writeFileSync(cls, CLASS);
      await kubectl('apply', '-f', cls);
      await expect.poll(() => row('data'), { timeout: 30_000 }).toContain('Bound');
      await expect.poll(() => text('#why'), { timeout: 20_000 }).toMatch(/^bound to volume pvc-/);
      await expect.poll(() => text('#calls'), { timeout: 20_000 }).toContain('csi-provisionerCreateVolumeOK');
      // Its timeline: the PV controller's and the provisioner's events, in order.
      await expect.poll(() => text('#timeline'), { timeout: 20_000 }).toContain('ProvisioningSucceeded');
      expect(await text('#timeline')).toContain('ExternalProvisioning');
      writeFileSync(join(shots, 'claim-bound.png'), await page.screenshot());

      // A claim that cannot bind says why.
      await page.evaluate(`location.hash = 'claim=default/stuck'`);
      await expect
        .poll(() => text('#why'), { timeout: 20_000 })
        .toBe('storageclass.storage.k8s.io "missing" not found');
      writeFileSync(join(shots, 'claim-stuck.png'), await page.screenshot());

      await kubectl('delete', 'pvc', 'data', 'stuck', '--timeout=60s');
      await expect.poll(() => row('data'), { timeout: 30_000 }).toBe('');
    } finally {
      await browser.close();
      child.kill('SIGTERM');
      await exit;
    }
    expect(mountsUnder(dataDir)).toEqual([]);
  }, 150_000);
});
