import { describe, it, expect } from 'vitest';
import { FakeClock, flushMicrotasks } from '../../../client/fake-clock.test-kit.js';
import type { Logger } from '../../../util/log.js';
import { newActualStateOfWorld } from '../cache/actual-state.js';
import { newDesiredStateOfWorld } from '../cache/desired-state.js';
import { socketPathOf, type DesiredPlugin, type RegisteredPlugin } from '../cache/types.js';
import { newOperationExecutor } from '../../../util/executor.js';
import { newReconcilerLoop } from './loop.js';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };
const A = socketPathOf('/reg/a-reg.sock');

function setup(o: { failRegister?: number } = {}) {
  const clock = new FakeClock();
  const dsw = newDesiredStateOfWorld(clock);
  const asw = newActualStateOfWorld();
  const executor = newOperationExecutor({ clock, log: quiet, backoff: { initialMs: 500, factor: 2, capMs: 30_000 } });
  const log: string[] = [];
  let failures = o.failRegister ?? 0;
  const operations = {
    register: async (p: DesiredPlugin) => {
      log.push(`register ${p.timestamp}`);
      if (failures-- > 0) throw new Error('dial failed');
      asw.addPlugin({ ...p, type: 'CSIPlugin', name: 'a', endpoint: p.socketPath });
    },
    unregister: async (p: RegisteredPlugin) => {
      log.push(`unregister ${p.timestamp}`);
      asw.removePlugin(p.socketPath);
    },
  };
  const loop = newReconcilerLoop({ dsw, asw, executor, operations, clock, periodMs: 1000, log: quiet });
  const ac = new AbortController();
  const done = loop.run(ac.signal);
  const stop = async (): Promise<void> => {
    ac.abort();
    await done;
    await executor.close();
  };
  return { clock, dsw, asw, executor, loop, log, stop };
}

describe('reconciler loop', () => {
  it('a trigger registers at once, without waiting for the period', async () => {
    const t = setup();
    t.dsw.addOrUpdatePlugin(A);
    t.loop.trigger();
    await t.executor.idle();
    await flushMicrotasks();
    expect(t.log).toEqual([`register ${t.clock.now()}`]);
    expect(t.asw.registeredPlugins()).toHaveLength(1);
    await t.stop();
  });

  it('the periodic pass catches changes nobody triggered', async () => {
    const t = setup();
    t.dsw.addOrUpdatePlugin(A);
    await flushMicrotasks();
    expect(t.log).toEqual([]);
    await t.clock.advance(1000);
    await t.executor.idle();
    expect(t.log).toHaveLength(1);
    await t.stop();
  });

  it('a re-created socket unregisters then registers; a removed one unregisters', async () => {
    const t = setup();
    t.dsw.addOrUpdatePlugin(A);
    t.loop.trigger();
    await t.executor.idle();
    const first = t.asw.get(A)?.timestamp;
    await t.clock.advance(10);
    t.dsw.addOrUpdatePlugin(A);
    const second = t.dsw.pluginsToRegister()[0]?.timestamp;
    t.loop.trigger();
    await t.executor.idle();
    await flushMicrotasks();
    await t.executor.idle();
    expect(t.asw.get(A)?.timestamp).toBe(second);
    t.dsw.removePlugin(A);
    t.loop.trigger();
    await t.executor.idle();
    expect(t.log).toEqual([`register ${first}`, `unregister ${first}`, `register ${second}`, `unregister ${second}`]);
    expect(t.asw.registeredPlugins()).toEqual([]);
    await t.stop();
  });

  it('a failed registration is retried when its backoff expires', async () => {
    const t = setup({ failRegister: 2 });
    t.dsw.addOrUpdatePlugin(A);
    t.loop.trigger();
    await t.executor.idle();
    expect(t.log).toHaveLength(1);
    await t.clock.advance(499);
    await t.executor.idle();
    expect(t.log).toHaveLength(1);
    await t.clock.advance(1);
    await t.executor.idle();
    expect(t.log).toHaveLength(2);
    await t.clock.advance(1000);
    await t.executor.idle();
    expect(t.log).toHaveLength(3);
    expect(t.asw.registeredPlugins()).toHaveLength(1);
    await t.stop();
  });
});
