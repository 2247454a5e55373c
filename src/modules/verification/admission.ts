import type { DatabasePool } from 'slonik';
import type { Config } from '../../config.ts';
import { AppError, INSUFFICIENT_UNITS } from '../../lib/errors.ts';
import type { Metrics } from '../../lib/metrics.ts';
import type { FairShare } from '../../context.ts';
import { predictedFinishMs } from '../capacity/index.ts';
import { spendableAfterLetIn } from './verification.repository.ts';

export const TOO_MANY_IN_FLIGHT = 'Too many live verifications in flight for this organisation; nothing was charged, retry later';
export const AUTHORITY_BUSY = 'The identity authority is too busy to answer this verification in time; nothing was charged, retry later';

const WAIT_HEADROOM = 0.8;

/** The breaker as the API sees it: should this live lookup be refused at once? */
export type CircuitView = { shouldRefuse(): boolean; unusedProbe(): void };

export type AdmissionDeps = { db: DatabasePool; config: Config; metrics: Metrics; fairShare: FairShare };

/** A live lookup asking in; `circuitOpen`: the breaker refuses it already (admission is not asked). */
type AdmissionOf = { orgId: number; referenceId: string; cap: number; mode: string; circuitOpen: boolean };

/**
 * Lets a live lookup in, or refuses it before anything is held or charged: 429 when admission
 * refuses it, 402 when the wallet could not pay anyway. Returns the queue priority the lookup takes
 * under the fairness scheme (fair-share.ts). With the circuit open nothing is let in (the caller
 * answers 503), but a wallet that could not pay says so first (402): that outlasts an outage.
 *
 * A wallet that cannot pay still answers 402, never 429: a refused caller is only told to come
 * back later if coming back could help. (An admitted caller whose wallet turns out empty when the
 * unit is held gets 402 too, and its slot is given back at once.)
 */
export async function admitLive(deps: AdmissionDeps & { circuit: CircuitView }, o: AdmissionOf): Promise<number> {
  try {
    return await admitOrRefuse(deps, o);
  } catch (err) {
    // A lookup the circuit let through (its probe, maybe) and admission refused never asks the authority.
    if (!o.circuitOpen) deps.circuit.unusedProbe();
    throw err;
  }
}

type Refusal = { reason: 'cap' | 'predicted_wait'; detail: string; waitMs: number };

// Every refusal leaves by the same way: the wallet asked first (one place), then the 429.
async function admitOrRefuse(deps: AdmissionDeps, o: AdmissionOf): Promise<number> {
  const admitted = o.circuitOpen ? null : await letIn(deps, o);
  if (typeof admitted === 'number') return admitted;
  await refuseIfWalletCannotPay(deps, o);
  if (admitted === null) return 0;
  deps.metrics.admissionsRefused.inc({ reason: admitted.reason });
  deps.metrics.verifications.inc({ mode: o.mode, outcome: `refused_${admitted.reason}` });
  const seconds = Math.min(60, Math.max(1, Math.ceil(admitted.waitMs / 1000)));
  throw new AppError('rate_limited', admitted.detail, { headers: { 'Retry-After': String(seconds) }, extra: { code: admitted.reason === 'cap' ? 'org_in_flight_cap' : 'authority_busy' } });
}

/** The fair share's answer: the lookup's priority, or why it is refused (its slot already given back). */
async function letIn(deps: AdmissionDeps, o: AdmissionOf): Promise<number | Refusal> {
  const a = await deps.fairShare.admit({ orgId: o.orgId, referenceId: o.referenceId, cap: o.cap });
  if (!a.admitted) return { reason: 'cap', detail: TOO_MANY_IN_FLIGHT, waitMs: a.meanLookupMs };
  const c = deps.config;
  const limits = { maxConcurrency: c.IDENTITY_MAX_CONCURRENCY, maxRps: c.IDENTITY_MAX_RPS };
  const finishMs = predictedFinishMs(a, limits);
  // With a free slot the lookup starts at once: it is never refused for the authority's own pace.
  // Otherwise it must fit in the wait with headroom: other organisations' first lookups may still
  // overtake it (that is the fairness), and durations vary.
  if (a.ahead < limits.maxConcurrency || finishMs <= c.VERIFY_WAIT_MS * WAIT_HEADROOM) return a.priority;
  await deps.fairShare.finish({ orgId: o.orgId, referenceId: o.referenceId, unusedTag: a.priority });
  return { reason: 'predicted_wait', detail: AUTHORITY_BUSY, waitMs: finishMs - c.VERIFY_WAIT_MS };
}

/**
 * A live lookup about to be refused for the authority's sake (admission, an open circuit) gets 402
 * instead when the wallet could not pay for it anyway: the most lasting reason wins. The lookups of
 * the organisation already let in count as paid for, held or not yet: in a burst they are let in
 * before any of them has held its unit, and the ones refused must see the units those will take.
 * Only on the refusal path, one read and no lock; nothing is held for the refused call, and the hold
 * stays the 402 decision of record for the calls let in.
 */
async function refuseIfWalletCannotPay(deps: Pick<AdmissionDeps, 'db' | 'metrics' | 'fairShare'>, o: { orgId: number; mode: string }): Promise<void> {
  // Redis out of reach (only the open circuit's path gets here without it): the wallet alone decides.
  const letIn = await deps.fairShare.inFlight(o.orgId).catch((): string[] => []);
  if ((await spendableAfterLetIn(deps.db, o.orgId, letIn)) >= 1) return;
  deps.metrics.verifications.inc({ mode: o.mode, outcome: 'insufficient_units' });
  throw new AppError('insufficient_units', INSUFFICIENT_UNITS);
}
