/**
 * The bounded chaos set (issue 11): seeded rounds of claims and pods through provisioning,
 * binding, attach, mount, expansion and teardown while processes are SIGKILLed at seeded moments
 * and restarted, with and without the driver-fault proxy; after each phase the cluster must
 * converge and the invariants hold (bench/chaos/invariants.ts). 32 kills in all. A failure names
 * its seed: `CHAOS_SEED=<seed> node dist/bench/chaos.js 1` replays that round with the soak's
 * settings, or set CHAOS_SEED for this file. The soak is `node dist/bench/chaos.js`.
 */
import { describe, expect, it } from 'vitest';
import { runRound, type RoundOptions } from '../../bench/chaos/round.js';
import { built, isRoot } from '../helpers/env.js';

if (!isRoot || !built) console.warn('chaos tests skipped: they need root (real mounts) and a build (npm test builds)');

const SEED = Number(process.env.CHAOS_SEED ?? 20261124);

const cases: Array<{ name: string } & Pick<RoundOptions, 'mode' | 'attach' | 'faults' | 'seed'>> = [
  { name: 'all-in-one `stowage up` with attach, killed in every phase', mode: 'allinone', attach: true, seed: SEED },
  {
    name: 'split processes with attach, any of them killed in every phase',
    mode: 'split',
    attach: true,
    seed: SEED + 1,
  },
  {
    name: 'split processes behind the driver-fault proxy, any of them killed',
    mode: 'split',
    attach: false,
    faults: true,
    seed: SEED + 2,
  },
  {
    name: 'split processes with attach behind the driver-fault proxy, any of them killed',
    mode: 'split',
    attach: true,
    faults: true,
    seed: SEED + 3,
  },
];

describe.skipIf(!isRoot || !built)('chaos: SIGKILL at seeded moments loses and leaks nothing', () => {
  for (const c of cases) {
    it(`${c.name} (seed ${c.seed})`, async () => {
      const lines: string[] = [];
      const r = await runRound({ ...c, claims: 4, killsPerPhase: 2, convergeMs: 90_000, log: (l) => lines.push(l) });
      if (r.violations.length > 0) console.log(lines.join('\n'));
      expect(r.violations).toEqual([]);
      expect(r.kills).toHaveLength(8);
    }, 480_000);
  }
});
