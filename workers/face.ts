import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { loadConfigOrExit, type Config } from '../src/config.ts';
import { shutdownDeadlineMs } from '../src/jobs/budgets.ts';
import { lowerPriority, startProcess, stopOnSignals } from '../src/lib/process.ts';
import { JOBS, QUEUES, queuePrefix } from '../src/jobs/catalog.ts';
import { describe } from '../src/lib/errors.ts';
import type { Logger } from '../src/lib/logger.ts';
import type { Metrics } from '../src/lib/metrics.ts';
import { serveProcessMetrics } from '../src/modules/ops/index.ts';
import { createWorkerRedis, redisTarget } from '../src/lib/redis.ts';
import { checkedAsSelfie, createFaceEngine, faceTurns, markFaceReady, READY_RENEW_MS, runFaceCheck, FACE_SAME_PERSON_DISTANCE, type FaceEngine, type FaceJobDeps, type FrameEngine } from '../src/modules/face/index.ts';
import { runComparisonJob } from '../src/modules/verification/index.ts';
import { createFaceWorkerDeps } from '../src/wiring.ts';
import { livenessRules, runLivenessJudgement } from '../src/modules/liveness/index.ts';

export type RunningFaceWorker = { worker: Worker; metrics: Metrics; close(): Promise<void> };

/**
 * The face worker (Procfile `face:`): the only process that loads the face model, once, before it
 * takes its first job. It runs the `face` queue alone, FACE_CONCURRENCY jobs at a time, so the
 * inference's CPU never competes inside the API or the lookup workers' event loops. Payloads and
 * results are never logged: they carry sealed images.
 */
export async function startFaceWorker(config: Config, logger: Logger, opts: { engine?: FaceEngine | FrameEngine } = {}): Promise<RunningFaceWorker> {
  // Lower CPU priority than the API's: on a small machine inference must not starve the requests.
  if (config.FACE_NICE > 0) {
    try {
      lowerPriority(config.FACE_NICE);
    } catch (err) {
      logger.warn({ err: describe(err) }, 'face worker priority not lowered');
    }
  }
  const started = Date.now();
  const engine = opts.engine ?? (await createFaceEngine());
  logger.info({ ms: Date.now() - started }, 'face model loaded');
  const deps: FaceJobDeps = { engine, ring: config.encryptionKeys };
  // Liveness frames are judged with the face match's same-person distance (its default threshold).
  const rules = livenessRules(config, FACE_SAME_PERSON_DISTANCE);
  // A live face match's comparison settles its verification: a small pool and a producer.
  const settling = await createFaceWorkerDeps(config, logger);
  const connection = createWorkerRedis(redisTarget(config));
  const turns = faceTurns(connection, { prefix: config.REDIS_PREFIX, waitMs: config.FACE_WAIT_MS });
  const worker = new Worker(
    QUEUES.face,
    async (job: Job) => {
      const log = logger.child({ job: job.name, jobId: job.id });
      // The fair share's virtual time: organisations arriving now queue just after the job starting.
      await turns.started(job.priority).catch((err: unknown) => log.warn({ err: describe(err) }, 'face turn start not noted'));
      try {
        if (job.name === 'face.check') {
          const p = JOBS['face.check'].payload.safeParse(job.data);
          if (!p.success) throw new UnrecoverableError('invalid payload for face.check');
          return JOBS['face.check'].result.parse(await runFaceCheck(deps, p.data));
        }
        if (job.name === 'face.compare') {
          const p = JOBS['face.compare'].payload.safeParse(job.data);
          if (!p.success) throw new UnrecoverableError('invalid payload for face.compare');
          // A live face match's comparison settles its verification here (verification's face-settle.ts).
          return JOBS['face.compare'].result.parse(await runComparisonJob({ db: settling.db, config, redis: connection, faceJob: deps, followDebit: settling.followDebit, metrics: settling.metrics }, p.data, job, log));
        }
        if (job.name === 'liveness.judge') {
          const p = JOBS['liveness.judge'].payload.safeParse(job.data);
          if (!p.success) throw new UnrecoverableError('invalid payload for liveness.judge');
          if (!('frame' in engine)) throw new UnrecoverableError('this face engine reads no landmarks');
          const frames = engine as FrameEngine;
          // The front frame is checked as the selfie in the same job (face.check's rule).
          const checkFront = (image: Buffer) => checkedAsSelfie(engine, image);
          const judged = await runLivenessJudgement({ analyse: (image) => frames.frame(image), distance: engine.distance, ring: config.encryptionKeys, rules, checkFront }, p.data);
          return JOBS['liveness.judge'].result.parse(judged);
        }
        throw new UnrecoverableError(`unknown job ${job.name} on ${QUEUES.face}`);
      } catch (err) {
        log.warn({ err: describe(err) }, 'face job attempt failed');
        throw err;
      }
    },
    { connection, prefix: queuePrefix(config.REDIS_PREFIX, QUEUES.face), concurrency: config.FACE_CONCURRENCY, lockDuration: config.WORKER_LOCK_MS, stalledInterval: config.WORKER_STALLED_INTERVAL_MS },
  );
  worker.on('error', (err) => logger.error({ err: describe(err), queue: QUEUES.face }, 'worker error'));
  await worker.waitUntilReady();
  // /readyz says face matches can be served while some face worker renews this.
  const renew = () => markFaceReady(connection, config.REDIS_PREFIX).catch((err: unknown) => logger.warn({ err: describe(err) }, 'face readiness not renewed'));
  await renew();
  const renewing = setInterval(() => void renew(), READY_RENEW_MS);
  renewing.unref();
  logger.info({ concurrency: config.FACE_CONCURRENCY }, 'face worker started');
  let closing: Promise<void> | undefined;
  return {
    worker,
    metrics: settling.metrics,
    close() {
      closing ??= (async () => {
        clearInterval(renewing);
        await worker.close();
        await settling.close();
        connection.disconnect();
        logger.info('face worker stopped');
      })();
      return closing;
    },
  };
}

if (import.meta.main) {
  const { config, logger } = startProcess('face', loadConfigOrExit);
  const running = await startFaceWorker(config, logger);
  // The face worker's own registry (the units its comparisons debit), behind the API's metrics token.
  const metricsServer = await serveProcessMetrics({
    variable: 'FACE_METRICS_PORT',
    port: config.FACE_METRICS_PORT,
    host: config.HOST,
    token: config.METRICS_TOKEN,
    registry: running.metrics.registry,
    // Jobs may be running already: they finish before the process says why it stops.
    stop: () => running.close(),
  });
  stopOnSignals(async () => {
    metricsServer?.close();
    await running.close();
  }, logger, shutdownDeadlineMs(config, 'worker'));
}
