/**
 * The disruption controller (kube-controller-manager's "disruption"): keeps each
 * PodDisruptionBudget's status — expected, current and desired healthy pods, the disruptions
 * allowed, the DisruptionAllowed condition — true to the pods its selector matches. The eviction
 * subresource spends disruptionsAllowed and records the pod in disruptedPods; this controller
 * forgets a disrupted pod once it is gone or after kube's two-minute timeout.
 */
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { PodDisruptionBudget } from 'kubernetes-types/policy/v1.js';
import { labelSelectorFromObject, matchesLabels } from '../../kube/selectors.js';
import { newController, watch, type RestClient, type ReconcileResult } from '../../client/index.js';
import { budgetStatus, DISRUPTED_POD_TIMEOUT_MS } from '../../kube/disruption.js';
import { splitNamespacedKey } from '../../kube/keys.js';
import { newLogger } from '../../util/log.js';
import { metaTime } from '../../util/metatime.js';
import type { MetricsRegistry } from '../../util/metrics.js';
import { newControllerInformers, type ControllerInformers, mapToKeys } from '../informers.js';
import { keyOf } from '../../kube/meta.js';

const log = newLogger('disruption');

export interface DisruptionControllerOptions {
  readonly client: RestClient;
  readonly signal: AbortSignal;
  readonly informers?: ControllerInformers;
  readonly workers?: number;
  readonly metrics?: MetricsRegistry;
}

/** The pods a budget selects (policy/v1: an empty selector matches every pod of the namespace; none matches none). */
export function selectedPods(pdb: PodDisruptionBudget, pods: readonly Pod[]): Pod[] {
  const sel = labelSelectorFromObject(pdb.spec?.selector, { nil: 'nothing', fieldPath: 'spec.selector' });
  return pods.filter(
    (p) => p.metadata?.namespace === pdb.metadata?.namespace && matchesLabels(sel, p.metadata?.labels),
  );
}

/** Runs the disruption controller until `signal` aborts. */
export async function runDisruptionController(o: DisruptionControllerOptions): Promise<void> {
  const { client } = o;
  const { pdbs, pods } = o.informers ?? newControllerInformers(client);
  const api = client.resource('PodDisruptionBudget');
  const controller = newController<string>({
    name: 'disruption',
    workers: o.workers ?? 1,
    metrics: o.metrics,
    log,
    sources: [
      watch(pdbs, (q) => ({ onAdd: (b) => q.add(keyOf(b)), onUpdate: (_, b) => q.add(keyOf(b)) })),
      watch(
        pods,
        mapToKeys((p: Pod) => pdbs.lister.list(p.metadata?.namespace).map(keyOf)),
      ),
    ],
    reconcile: async (key): Promise<ReconcileResult | void> => {
      const [ns, name] = splitNamespacedKey(key);
      const pdb = pdbs.lister.get(ns, name);
      if (!pdb) return;
      const now = Date.now();
      const status = budgetStatus(pdb, selectedPods(pdb, pods.lister.list(ns)), now, metaTime(now));
      if (JSON.stringify(status) !== JSON.stringify(pdb.status)) {
        await api.updateStatus({ ...pdb, status }, { namespace: ns });
        log.debug('budget status updated', { budget: key, disruptionsAllowed: status.disruptionsAllowed });
      }
      // Look again when the oldest disrupted pod's entry expires.
      if (status.disruptedPods) return { requeueAfterMs: DISRUPTED_POD_TIMEOUT_MS };
    },
  });
  await controller.run(o.signal);
}
