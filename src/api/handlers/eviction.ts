/**
 * POST pods/<name>/eviction (policy/v1 Eviction), as kube's EvictionREST: a pod no budget covers,
 * or one that disrupts nothing (not running, already terminating), is deleted at once; a pod
 * covered by one PodDisruptionBudget is deleted only when the budget allows a disruption, which
 * this spends (disruptionsAllowed − 1, the pod recorded in disruptedPods) before the delete.
 */
import { admissionFor } from './admission.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { PodDisruptionBudgetStatus } from 'kubernetes-types/policy/v1.js';
import { isPodHealthy } from '../../kube/disruption.js';
import { metaTime } from '../../util/metatime.js';
import { decodeBody, readBody, sendJson } from '../http.js';
import type { DeleteOptions } from '../registry.js';
import { objectAt, strAt } from '../resources/corehelpers.js';
import { budgetSelects } from '../resources/poddisruptionbudget.js';
import type { KubeObject } from '../resources/types.js';
import { ApiTooManyRequestsError, badRequest, forbidden, type HttpError, successStatus } from '../status.js';
import { dryRun, type ResourceCall } from './request.js';

const BUDGET_KIND = 'PodDisruptionBudget';
// kube's MaxDisruptedPodSize: past this many pending evictions a budget refuses more.
const MAX_DISRUPTED_PODS = 2000;

/** The 429 a budget's refusal answers with: kube's message, the reason in a DisruptionBudget cause. */
function budgetRefusal(why: string): HttpError {
  return new ApiTooManyRequestsError("Cannot evict pod as it would violate the pod's disruption budget.", {
    causes: [{ type: 'DisruptionBudget', message: why, field: '' }],
  });
}

/**
 * The eviction's DeleteOptions; a dry run (`dryRun: [All]` in them or on the query, as kubectl
 * drain --dry-run=server sends it) checks the budget but neither spends it nor deletes.
 */
function deleteOptionsOf(body: unknown, queryDryRun: boolean): DeleteOptions {
  const o = objectAt(body, 'deleteOptions') ?? {};
  const pre = objectAt(o, 'preconditions');
  const grace = o.gracePeriodSeconds;
  const dry = Array.isArray(o.dryRun) ? o.dryRun : [];
  for (const x of dry)
    if (x !== 'All') throw badRequest(`dryRun: Unsupported value: "${String(x)}": supported values: "All"`);
  return {
    ...(queryDryRun || dry.length > 0 ? { dryRun: true } : {}),
    ...(typeof grace === 'number' ? { gracePeriodSeconds: grace } : {}),
    ...(pre
      ? {
          preconditions: {
            uid: strAt(pre, 'uid') || undefined,
            resourceVersion: strAt(pre, 'resourceVersion') || undefined,
          },
        }
      : {}),
  };
}

/** A pod whose eviction disrupts nothing: finished, never started, or already going. */
function disruptsNothing(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return (
    phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || pod.metadata?.deletionTimestamp !== undefined
  );
}

export async function handleEviction({ r, req, res, user }: ResourceCall): Promise<void> {
  const body = decodeBody(await readBody(req), req.headers['content-type']);
  const evictionName = strAt(objectAt(body, 'metadata'), 'name');
  if (evictionName && evictionName !== r.name) throw badRequest('name in URL does not match name in Eviction object');
  const name = r.name!;
  const ns = r.namespace;
  const pods = r.storage;
  const podObj = pods.mustGet(ns, name).obj;
  const pod = podObj as Pod;
  admissionFor(user, r, 'create')?.(undefined, podObj);
  const opts = deleteOptionsOf(body, dryRun(r.query));
  const evict = async (): Promise<void> => {
    await pods.delete(ns, name, opts);
    sendJson(res, 201, { ...successStatus(), code: 201 });
  };
  if (disruptsNothing(pod)) return evict();

  const budgets = pods.registry
    .admissionContext()
    .list(BUDGET_KIND, ns)
    .filter((b) => budgetSelects(b, podObj));
  if (budgets.length === 0) return evict();
  if (budgets.length > 1)
    throw new Error('This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
  const budget = budgets[0]!;
  const budgetName = budget.metadata.name ?? '';
  // An unready pod is not one the budget counts: evicting it spends nothing when the budget is
  // met (IfHealthyBudget, the default) or always (AlwaysAllow), as kube 1.27+.
  const st = (budget.status ?? {}) as PodDisruptionBudgetStatus;
  const policy = strAt(objectAt(budget, 'spec'), 'unhealthyPodEvictionPolicy') || 'IfHealthyBudget';
  if (
    !isPodHealthy(pod) &&
    (policy === 'AlwaysAllow' || (st.currentHealthy >= st.desiredHealthy && st.desiredHealthy > 0))
  )
    return evict();

  await pods.registry.kind(BUDGET_KIND).update(
    ns,
    budgetName,
    (cur: KubeObject) => {
      const status = (cur.status ?? {}) as PodDisruptionBudgetStatus;
      if ((status.observedGeneration ?? 0) < (cur.metadata.generation ?? 0)) {
        throw budgetRefusal(`The disruption budget ${budgetName} is still being processed by the server.`);
      }
      if (status.disruptionsAllowed < 0) throw forbidden('pdb disruptions allowed is negative');
      if (Object.keys(status.disruptedPods ?? {}).length > MAX_DISRUPTED_PODS)
        throw forbidden('DisruptedPods map too big - too many evictions not confirmed by PDB controller');
      if (status.disruptionsAllowed === 0) {
        throw budgetRefusal(
          `The disruption budget ${budgetName} needs ${status.desiredHealthy} healthy pods and has ${status.currentHealthy} currently`,
        );
      }
      const next = structuredClone(cur);
      // No resourceVersion: a race with another eviction or the controller re-runs these checks on the new budget (kube retries on conflict).
      delete next.metadata.resourceVersion;
      next.status = {
        ...status,
        disruptionsAllowed: status.disruptionsAllowed - 1,
        disruptedPods: { ...(status.disruptedPods ?? {}), [name]: metaTime() },
      };
      return next;
    },
    { subresource: 'status', dryRun: opts.dryRun },
  );
  await evict();
}
