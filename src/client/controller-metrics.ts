/**
 * Queue and reconcile metrics of the controller runtime, under the names Kubernetes components
 * expose: client-go's workqueue_* (labelled by queue `name`) and controller-runtime's
 * controller_runtime_reconcile_* (labelled by `controller`).
 */
import type { Gauge, MetricsRegistry } from '../util/metrics.js';
import type { WorkQueueMetrics } from './workqueue.js';

// client-go's workqueue histograms: 10 exponential buckets from 10 ns to 10 s.
const WORKQUEUE_BUCKETS = Array.from({ length: 10 }, (_, i) => 1e-8 * Math.pow(10, i));

export interface QueueMetrics<K> extends WorkQueueMetrics<K> {
  /** Stops reporting this queue's gauges. */
  close(): void;
}

// Several queues share one gauge family; each registers a refresher run before every scrape.
const refreshers = new WeakMap<Gauge, Set<(g: Gauge) => void>>();

function refreshed(g: Gauge, f: (g: Gauge) => void): () => void {
  let set = refreshers.get(g);
  if (!set) {
    const fs = new Set<(g: Gauge) => void>();
    refreshers.set(g, (set = fs));
    g.collect = (gauge) => {
      gauge.reset();
      for (const r of fs) r(gauge);
    };
  }
  set.add(f);
  return () => void set.delete(f);
}

/** Metrics of the queue `name`; `depth` reads the number of waiting items at scrape time. */
export function newQueueMetrics<K>(
  m: MetricsRegistry,
  name: string,
  depth: () => number,
  now: () => number = () => performance.now(),
): QueueMetrics<K> {
  const l = { name };
  const adds = m.counter('workqueue_adds_total', 'Total number of adds handled by workqueue', ['name']);
  const retries = m.counter('workqueue_retries_total', 'Total number of retries handled by workqueue', ['name']);
  const queueDuration = m.histogram(
    'workqueue_queue_duration_seconds',
    'How long in seconds an item stays in workqueue before being requested.',
    ['name'],
    WORKQUEUE_BUCKETS,
  );
  const workDuration = m.histogram(
    'workqueue_work_duration_seconds',
    'How long in seconds processing an item from workqueue takes.',
    ['name'],
    WORKQUEUE_BUCKETS,
  );
  const addedAt = new Map<K, number>();
  const startedAt = new Map<K, number>();
  const removers = [
    refreshed(m.gauge('workqueue_depth', 'Current depth of workqueue', ['name']), (g) => g.set(l, depth())),
    refreshed(
      m.gauge(
        'workqueue_unfinished_work_seconds',
        "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
        ['name'],
      ),
      (g) => {
        const t = now();
        let sum = 0;
        for (const s of startedAt.values()) sum += t - s;
        g.set(l, sum / 1000);
      },
    ),
    refreshed(
      m.gauge(
        'workqueue_longest_running_processor_seconds',
        'How many seconds has the longest running processor for workqueue been running.',
        ['name'],
      ),
      (g) => {
        const t = now();
        let longest = 0;
        for (const s of startedAt.values()) longest = Math.max(longest, t - s);
        g.set(l, longest / 1000);
      },
    ),
  ];
  return {
    added(key) {
      adds.inc(l);
      if (!addedAt.has(key)) addedAt.set(key, now());
    },
    taken(key) {
      const t = now();
      const a = addedAt.get(key);
      if (a !== undefined) queueDuration.observe(l, (t - a) / 1000);
      addedAt.delete(key);
      startedAt.set(key, t);
    },
    done(key) {
      const s = startedAt.get(key);
      if (s !== undefined) workDuration.observe(l, (now() - s) / 1000);
      startedAt.delete(key);
    },
    retried() {
      retries.inc(l);
    },
    close() {
      for (const r of removers) r();
    },
  };
}

/** controller-runtime's `result` label values. */
export type ReconcileOutcome = 'success' | 'error' | 'requeue_after';

export interface ReconcileMetrics {
  outcome(r: ReconcileOutcome, terminal?: boolean): void;
  time(seconds: number): void;
}

export function newReconcileMetrics(m: MetricsRegistry, controller: string): ReconcileMetrics {
  const l = { controller };
  const total = m.counter('controller_runtime_reconcile_total', 'Total number of reconciliations per controller', [
    'controller',
    'result',
  ]);
  const errors = m.counter(
    'controller_runtime_reconcile_errors_total',
    'Total number of reconciliation errors per controller',
    ['controller'],
  );
  const terminal = m.counter(
    'controller_runtime_terminal_reconcile_errors_total',
    'Total number of terminal reconciliation errors per controller',
    ['controller'],
  );
  const time = m.histogram(
    'controller_runtime_reconcile_time_seconds',
    'Length of time per reconciliation per controller',
    ['controller'],
  );
  return {
    outcome(result, isTerminal = false) {
      total.inc({ controller, result });
      if (result === 'error') errors.inc(l);
      if (isTerminal) terminal.inc(l);
    },
    time: (s) => time.observe(l, s),
  };
}
