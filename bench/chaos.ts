/**
 * B7: chaos soak. Rounds of claims and pods through provisioning, binding, attach, mount,
 * expansion and teardown while seeded random processes are SIGKILLed and restarted, over the
 * all-in-one and the split processes, with and without attach, and with the driver-fault proxy;
 * the invariants are checked after every convergence. Needs root (real mounts) and a build.
 *   node dist/bench/chaos.js [ROUNDS=24] [KILLS_PER_PHASE=3] [CLAIMS=6]
 *   CHAOS_SEED=<n> sets the first round's seed; `CHAOS_SEED=<n> node dist/bench/chaos.js 1` replays
 *   one round (its mode and options derive from the seed); CHAOS_TARGETS=sidecar,driver kills only
 *   those processes (split names: api controllers sidecar node driver registrar; all-in-one: up)
 */
import { percentile } from './harness.js';
import { SPLIT_PROCESSES, type ProcessName } from './chaos/cluster.js';
import { runRound, type RoundOptions, type RoundResult } from './chaos/round.js';

const ROUNDS = Number(process.argv[2] ?? 24);
const KILLS = Number(process.argv[3] ?? 3);
const CLAIMS = Number(process.argv[4] ?? 6);
const targets = process.env.CHAOS_TARGETS?.split(',').filter((t): t is ProcessName =>
  (['up', ...SPLIT_PROCESSES] as string[]).includes(t),
);
const base = process.env.CHAOS_SEED ? Number(process.env.CHAOS_SEED) : Math.floor(Math.random() * 1e9);

/** The variant a seed runs: the seed alone replays it. */
export function variantOf(seed: number): Pick<RoundOptions, 'mode' | 'attach' | 'faults'> {
  const v = seed % 4;
  return {
    mode: v === 0 ? 'allinone' : 'split',
    attach: v === 1 || v === 3 || (v === 0 && seed % 8 === 4),
    faults: v >= 2,
  };
}

const results: RoundResult[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const seed = base + r;
  const variant = variantOf(seed);
  const mine = targets?.filter((t) => (variant.mode === 'allinone') === (t === 'up'));
  const res = await runRound({
    seed,
    ...variant,
    ...(mine && mine.length > 0 ? { targets: mine } : {}),
    claims: CLAIMS,
    killsPerPhase: KILLS,
    keepOnFailure: true,
    log: (l) => process.stderr.write(`${l}\n`),
  });
  results.push(res);
  process.stderr.write(
    `round ${r + 1}: seed ${seed} ${JSON.stringify(variantOf(seed))}: ${res.kills.length} kills, ${Object.values(res.faults).reduce((a, b) => a + b, 0)} faults, ${res.exits.length} self-exits ${res.exits.join(' ')}, ${res.violations.length} violations\n`,
  );
}
const conv = results.flatMap((r) => r.convergenceMs).sort((a, b) => a - b);
const kills = results.reduce((a, r) => a + r.kills.length, 0);
const faults = results.reduce((a, r) => a + Object.values(r.faults).reduce((x, y) => x + y, 0), 0);
const violations = results.flatMap((r) => r.violations);
const byTarget = new Map<string, number>();
for (const r of results) for (const k of r.kills) byTarget.set(k.target, (byTarget.get(k.target) ?? 0) + 1);
const byFault = new Map<string, number>();
for (const r of results) for (const [k, n] of Object.entries(r.faults)) byFault.set(k, (byFault.get(k) ?? 0) + n);
console.log(
  `chaos: ${results.length} rounds (seeds ${base}..${base + results.length - 1}), ${kills} kills, ${faults} faults, convergence p50 ${percentile(conv, 50)} ms p99 ${percentile(conv, 99)} ms max ${conv.at(-1) ?? 0} ms, ${violations.length} violations`,
);
console.log(
  `  processes that exited by themselves and were restarted: ${results.flatMap((r) => r.exits).join(', ') || 'none'}`,
);
console.log(`  kills by process: ${[...byTarget].map(([k, n]) => `${k} ${n}`).join(', ')}`);
console.log(
  `  faults by kind:method: ${[...byFault]
    .sort()
    .map(([k, n]) => `${k} ${n}`)
    .join(', ')}`,
);
for (const v of violations) console.log(`  violation: ${v}`);
for (const r of results) if (r.dataDir) console.log(`  kept data dir of seed ${r.seed}: ${r.dataDir}`);
process.exitCode = violations.length > 0 ? 1 : 0;
