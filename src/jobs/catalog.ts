import { z } from 'zod';

/**
 * Every queue and job of the service, defined once. Producers and workers both import this; the
 * worker validates each payload against its schema and refuses to start when a job has no processor.
 * Payloads carry references only: personal data never enters Redis (BullMQ keeps payloads in clear).
 */
export const QUEUES = {
  lookups: 'lookups',
  credits: 'credits',
  emails: 'emails',
  maintenance: 'maintenance',
  batches: 'batches',
  // Face matches: their own worker process (workers/face.ts), the only one that loads the face model.
  face: 'face',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/**
 * BullMQ's key prefix for one queue: the environment's REDIS_PREFIX, then the queue's own hash tag,
 * e.g. `idv:{lookups}`, so the queue's keys read `idv:{lookups}:lookups:wait`. On a Redis Cluster
 * BullMQ's scripts touch many keys of one queue at once, which must share a hash slot; a tag per
 * queue (not one for the whole service) lets different queues sit on different masters. The tag
 * holds the queue name only, so environments sharing a cluster share those slots but never keys.
 * Every Queue, Worker and QueueEvents is built with this prefix.
 */
export function queuePrefix(prefix: string, queue: QueueName): string {
  return `${prefix}:{${queue}}`;
}

const requestId = z.string().max(100).optional();
const batchId = z.string().regex(/^BAT-[A-Z0-9]{12}$/).optional();

/**
 * AES-256-GCM ciphertext (base64) and its key id. Only ciphertext ever travels through Redis: it
 * saves the worker and the API a PostgreSQL read each, and reveals nothing without the key.
 */
const sealed = z.object({ keyId: z.string().max(32), data: z.string().max(200_000) });

/** An image sealed like the rest (a selfie is at most 2 MiB decoded, so under 2.9 MB as base64). */
const sealedImage = z.object({ keyId: z.string().max(32), data: z.string().max(3_000_000) });

export const JOBS = {
  'verification.lookup': {
    queue: QUEUES.lookups,
    // orgId lets the worker give the organisation's in-flight slot back when the lookup settles.
    // useOnce: the sealed query holds a vNIN, erased from the job as its lookup starts (README: vNIN).
    // delivery (absent: synchronous) marks a lookup that waits out authority outages until
    // acceptedAt + ASYNC_MAX_WAIT_HOURS, each try re-queued with a delay instead of holding a slot.
    // batchId: a row of that batch; its settlement is reported to the batch (batch.lookup-settled).
    payload: z.object({
      referenceId: z.string().regex(/^REF-[A-Z0-9]{12}$/),
      orgId: z.number().int().positive().optional(),
      requestId,
      query: sealed.optional(),
      delivery: z.enum(['async', 'batch']).optional(),
      acceptedAt: z.number().int().positive().optional(),
      useOnce: z.literal(true).optional(),
      batchId,
      // A face match's selfie (synchronous or asynchronous), sealed (associated data `face:<referenceId>`):
      // handed with the found record to a `face.compare` job, which settles. The job is removed as it ends.
      selfie: sealedImage.optional(),
      // A face match whose selfie was a passed liveness check's front frame: that check (session, steps;
      // no frame), sealed (associated data `face:<referenceId>`), kept with the comparison.
      liveness: sealed.optional(),
    }),
    result: z.object({
      outcome: z.enum(['found', 'not_found', 'failed']),
      code: z.string().optional(),
      detail: z.string().optional(),
      record: sealed.optional(),
      // A face match's record was found and its comparison handed to the face queue (`face.compare`,
      // which settles it): the verification is still pending when this job completes.
      compareHandedOver: z.literal(true).optional(),
    }),
    // Retries of upstream faults happen inside the processor with backoff and jitter; BullMQ's own
    // attempts cover a worker that died mid-job (a stalled job is moved back and run again).
    attempts: 3,
    backoffMs: 500,
  },
  'topup.credit': {
    queue: QUEUES.credits,
    payload: z.object({ reference: z.string().regex(/^TOP-[0-9]+-[0-9a-f]{16}$/), source: z.enum(['webhook', 'verify', 'sweep', 'reversal']), requestId }),
    result: z.object({
      outcome: z.enum(['credited', 'already_credited', 'not_paid', 'amount_mismatch', 'unknown_reference', 'refund_due', 'charged_back']),
      processorStatus: z.string().optional(),
      unitsAdded: z.number().int().optional(),
      newBalance: z.number().int().optional(),
      pricePaid: z.number().int().optional(),
    }),
    attempts: 8,
    backoffMs: 1000,
  },
  // An automatic top-up's charge of the saved card (issue 34 item 6): queued by a debit (the trigger on
  // wallets), charged and credited here. A rerun asks the processor what the first run did first.
  'topup.auto_charge': {
    queue: QUEUES.credits,
    payload: z.object({ chargeId: z.number().int().positive(), requestId }),
    result: z.object({
      outcome: z.enum(['credited', 'already_credited', 'declined', 'skipped', 'pending', 'ended', 'missing', 'not_paid', 'amount_mismatch', 'unknown_reference', 'refund_due', 'charged_back']),
      // The top-up it charged, once there is one.
      reference: z.string().optional(),
      detail: z.string().optional(),
    }),
    attempts: 5,
    backoffMs: 2000,
  },
  'outbox.deliver': {
    queue: QUEUES.emails,
    payload: z.object({ outboxId: z.number().int().positive() }),
    result: z.object({ outcome: z.enum(['sent', 'already_sent', 'missing']) }),
    attempts: 10,
    backoffMs: 5000,
  },
  'topup.sweep': {
    queue: QUEUES.maintenance,
    payload: z.object({}),
    result: z.object({ checked: z.number().int(), credited: z.number().int(), closed: z.number().int() }),
    attempts: 1,
    backoffMs: 0,
  },
  // Abandoned top-ups, once a day for TOPUP_RECHECK_DAYS: a late payment whose webhook was lost.
  'topup.recheck': {
    queue: QUEUES.maintenance,
    payload: z.object({}),
    result: z.object({ checked: z.number().int(), credited: z.number().int(), refundDue: z.number().int() }),
    attempts: 1,
    backoffMs: 0,
  },
  'ledger.audit': {
    queue: QUEUES.maintenance,
    payload: z.object({}),
    result: z.object({ walletsChecked: z.number().int(), mismatches: z.number().int(), reservedMismatches: z.number().int() }),
    attempts: 1,
    backoffMs: 0,
  },
  'retention.erase': {
    queue: QUEUES.maintenance,
    payload: z.object({}),
    result: z.object({ erased: z.number().int(), idempotencyKeysDeleted: z.number().int() }),
    attempts: 1,
    backoffMs: 0,
  },
  // Webhook events and deliveries past WEBHOOK_RETENTION_DAYS, none of them pending.
  'webhooks.prune': {
    queue: QUEUES.maintenance,
    payload: z.object({}),
    result: z.object({ events: z.number().int(), deliveries: z.number().int() }),
    attempts: 1,
    backoffMs: 0,
  },
  'verification.sweep': {
    queue: QUEUES.maintenance,
    payload: z.object({}),
    result: z.object({ requeued: z.number().int(), released: z.number().int() }),
    attempts: 1,
    backoffMs: 0,
  },
  // Verification-link submissions left pending past their grace period (the page's process stopped,
  // or its verification outlived the page's wait): settled from their verification, or abandoned.
  'links.sweep': {
    queue: QUEUES.maintenance,
    payload: z.object({}),
    result: z.object({ settled: z.number().int(), abandoned: z.number().int() }),
    attempts: 1,
    backoffMs: 0,
  },
  // Feeds batches their next lookups: one batch (batchId), an organisation's open batches after a
  // credit (orgId), or every open batch (the schedule, which also resumes paused batches).
  'batch.feed': {
    queue: QUEUES.batches,
    payload: z.object({ batchId, orgId: z.number().int().positive().optional() }),
    result: z.object({ batches: z.number().int(), queued: z.number().int() }),
    attempts: 3,
    backoffMs: 1000,
  },
  // A batch row's lookup has settled (its lookup job reports it, from the job's own result): the
  // batches module notes the row's end, ends the batch after its last row and feeds it the next ones.
  // The verification side never calls into batches; a report lost (a crash, Redis away) is made up
  // by the periodic batch.feed, which reads the rows' verifications.
  'batch.lookup-settled': {
    queue: QUEUES.batches,
    payload: z.object({
      batchId: z.string().regex(/^BAT-[A-Z0-9]{12}$/),
      referenceId: z.string().regex(/^REF-[A-Z0-9]{12}$/),
      outcome: z.enum(['found', 'not_found', 'failed']),
      code: z.string().max(100).optional(),
    }),
    result: z.object({ queued: z.number().int() }),
    attempts: 3,
    backoffMs: 1000,
  },
  // The monthly e-mail to finance officers linking the statement of the Lagos month that ended.
  'statements.mail': {
    queue: QUEUES.maintenance,
    payload: z.object({}),
    result: z.object({ month: z.string(), queued: z.number().int() }),
    attempts: 3,
    backoffMs: 60_000,
  },
  'outbox.sweep': {
    queue: QUEUES.maintenance,
    payload: z.object({}),
    result: z.object({ enqueued: z.number().int() }),
    attempts: 1,
    backoffMs: 0,
  },
  // A selfie's check before anything is looked up: one face, large enough. The selfie travels sealed
  // (associated data `face:<referenceId>`) and the job is removed as it ends; no descriptor leaves the worker.
  'face.check': {
    queue: QUEUES.face,
    payload: z.object({ referenceId: z.string().regex(/^REF-[A-Z0-9]{12}$/), requestId, selfie: sealedImage }),
    result: z.object({ outcome: z.enum(['accepted', 'refused']), code: z.string().optional() }),
    attempts: 2,
    backoffMs: 200,
  },
  // The comparison of the selfie with the record's photo (sealed too). A fixture's (no `settle`): the
  // distance, or why none, for the API that waits. A live face match's: handed over by its lookup job
  // once the record is found (`settle`: the sealed record, associated data `face-record:<referenceId>`;
  // the upstream attempts; match_only; the sealed liveness check; whether the end is reported), the
  // face worker compares AND settles the verification, and answers as a lookup does (the row is the truth).
  'face.compare': {
    queue: QUEUES.face,
    payload: z.object({
      referenceId: z.string().regex(/^REF-[A-Z0-9]{12}$/),
      requestId,
      selfie: sealedImage,
      photo: sealedImage,
      settle: z
        .object({
          orgId: z.number().int().positive(),
          // The record with its photo: as large as an image.
          record: sealedImage,
          attempts: z.number().int().min(0),
          matchOnly: z.boolean(),
          liveness: sealed.optional(),
          report: z.boolean(),
          // A synchronous match's: a comparison not started by then (epoch ms) ends face_unavailable.
          notAfter: z.number().int().positive().optional(),
        })
        .optional(),
    }),
    result: z.object({
      outcome: z.enum(['compared', 'no_reference_photo', 'refused', 'found', 'not_found', 'failed']),
      distance: z.number().min(0).optional(),
      code: z.string().optional(),
    }),
    attempts: 2,
    backoffMs: 200,
  },
  // A liveness session's frames, judged by a face worker (it loads the model). Each frame travels sealed
  // (associated data `liveness:<sessionId>`) and the job is removed as it ends; only the result leaves.
  'liveness.judge': {
    queue: QUEUES.face,
    payload: z.object({
      sessionId: z.string().regex(/^lvs_[0-9a-f]{24}$/),
      requestId,
      // The liveness module's challenges and steps (liveness.job.ts checks, at compile time, that they agree).
      challenges: z.array(z.enum(['turn_left', 'turn_right', 'look_up'])).length(3),
      frames: z.array(z.object({ step: z.enum(['front', 'turn_left', 'turn_right', 'look_up']), captured_at_ms: z.number().int().min(0), image: sealedImage })).min(1).max(12),
    }),
    result: z.object({
      status: z.enum(['passed', 'failed']),
      reasons: z.array(z.string()),
      steps: z.array(z.object({ step: z.string(), passed: z.boolean(), yaw: z.number().nullable(), pitch: z.number().nullable(), frames: z.number().int() })),
      // The index of the front frame the poses were measured from: a passed check's selfie.
      front: z.number().int().min(0).max(11).optional(),
      // That front frame checked as a selfie (the face.check's answer), in the same trip: a liveness
      // face match makes one face job before its lookup.
      frontCheck: z.object({ outcome: z.enum(['accepted', 'refused']), code: z.string().optional() }).optional(),
    }),
    attempts: 2,
    backoffMs: 200,
  },
} as const;

export type JobName = keyof typeof JOBS;
export type JobPayload<N extends JobName> = z.infer<(typeof JOBS)[N]['payload']>;
export type JobResult<N extends JobName> = z.infer<(typeof JOBS)[N]['result']>;

/** BullMQ job ids may not contain ':' nor be digits only; every id is built here. */
export const jobIds = {
  lookup: (referenceId: string) => `lookup-${referenceId}`,
  creditFromWebhook: (eventKey: string) => `credit-evt-${eventKey}`,
  creditFromVerify: (reference: string, nonce: string) => `credit-${reference}-v-${nonce}`,
  creditFromSweep: (reference: string, window: string) => `credit-${reference}-s-${window}`,
  outbox: (outboxId: number) => `outbox-${outboxId}`,
  autoCharge: (chargeId: number) => `auto-charge-${chargeId}`,
  batchStart: (batchId: string) => `batch-start-${batchId}`,
  batchWake: (orgId: number, reference: string) => `batch-wake-${orgId}-${reference}`,
  batchSettled: (referenceId: string) => `batch-settled-${referenceId}`,
  faceCheck: (referenceId: string) => `face-check-${referenceId}`,
  faceCompare: (referenceId: string) => `face-compare-${referenceId}`,
  // One job per request (nonce): two requests sending one session at once are both judged, and the
  // first to record its judgement wins (the other 409), instead of the second taking the first's job.
  livenessJudge: (sessionId: string, nonce: string) => `liveness-judge-${sessionId}-${nonce}`,
};

export const SCHEDULES = {
  'topup.sweep': 'RECONCILE_CRON',
  'topup.recheck': 'TOPUP_RECHECK_CRON',
  'ledger.audit': 'LEDGER_AUDIT_CRON',
  'retention.erase': 'RETENTION_CRON',
  'webhooks.prune': 'RETENTION_CRON',
  'verification.sweep': 'RECONCILE_CRON',
  'outbox.sweep': 'RECONCILE_CRON',
  'links.sweep': 'RECONCILE_CRON',
  'batch.feed': 'BATCH_FEED_CRON',
  'statements.mail': 'STATEMENT_MAIL_CRON',
} as const satisfies Partial<Record<JobName, string>>;
