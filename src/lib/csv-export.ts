import { randomUUID } from 'node:crypto';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import { AppError, describe } from './errors.ts';
import type { Logger } from './logger.ts';

// The lists that export CSV (ledger, top-ups, verifications) share their slots: each export holds a
// connection of its process's export pool for as long as its client reads, so the caps (per process,
// and per organisation across all processes) and the slow-reader rule below are what keep one tenant
// from holding every connection.

export type CsvExportLimits = { perProcess: number; perOrg: number; minBytes: number; windowMs: number };

export const TOO_MANY_EXPORTS = 'Too many CSV exports in progress; retry shortly';
export const TOO_MANY_ORG_EXPORTS = 'Too many CSV exports in progress for this organisation; retry shortly';

// Per organisation the count is shared by every API process through Redis: a sorted set per
// organisation whose members are the running exports, scored by their last heartbeat. An export
// whose process died without giving its slot back stops counting once it misses its heartbeats.
const TAKE_ORG_SLOT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;
const HEARTBEAT = `
local t = redis.call('TIME')
redis.call('ZADD', KEYS[1], 'XX', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1`;

/** A running export misses this long of heartbeats (one every third of it) before its slot is taken back. */
const ORG_SLOT_STALE_MS = 60_000;

type SlotStore = { eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown> };

export class CsvExportSlots {
  private total = 0;
  readonly limits: CsvExportLimits;
  private readonly redis: SlotStore;
  private readonly prefix: string;

  constructor(limits: CsvExportLimits, shared: { redis: SlotStore; prefix: string }) {
    this.limits = limits;
    this.redis = shared.redis;
    this.prefix = shared.prefix;
  }

  /** Takes a slot for one export of `orgId`, or refuses with 429; the function given back frees it (once). */
  async take(orgId: number): Promise<() => void> {
    const retry = { headers: { 'Retry-After': '5' } };
    if (this.total >= this.limits.perProcess) throw new AppError('rate_limited', TOO_MANY_EXPORTS, retry);
    this.total++;
    const key = `${this.prefix}:csv-exports:{${orgId}}`;
    const member = randomUUID();
    try {
      const taken = await this.redis.eval(TAKE_ORG_SLOT, 1, key, this.limits.perOrg, ORG_SLOT_STALE_MS, member);
      if (Number(taken) !== 1) throw new AppError('rate_limited', TOO_MANY_ORG_EXPORTS, retry);
    } catch (err) {
      this.total--;
      throw err;
    }
    const heartbeat = setInterval(() => void this.redis.eval(HEARTBEAT, 1, key, ORG_SLOT_STALE_MS, member).catch(() => undefined), ORG_SLOT_STALE_MS / 3);
    heartbeat.unref();
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      this.total--;
      clearInterval(heartbeat);
      // Not given back (Redis out of reach): the slot lapses when its heartbeats stop.
      void this.redis.eval(`return redis.call('ZREM', KEYS[1], ARGV[1])`, 1, key, member).catch(() => undefined);
    };
  }
}

/**
 * JSON or CSV, by the request's Accept header: no header, `*\/*` or JSON first is JSON; an Accept
 * that allows neither is 406.
 */
export function wantsCsv(req: Request): boolean {
  const chosen = req.accepts(['application/json', 'text/csv']);
  if (chosen === false) throw new AppError('not_acceptable', 'Accept must allow application/json or text/csv');
  return chosen === 'text/csv';
}

// One write per line would make a chunk (and a chunked-encoding frame) per line: lines are gathered
// up to this many characters before they are pushed on.
const BATCH_CHARS = 64 * 1024;

/**
 * slonik's row events (one CSV line each, formatted by the query) in, CSV text out, the header first
 * (RFC 4180, CRLF line ends). Backpressure passes through: when the reader is full, this stops taking
 * rows, and the row stream stops fetching.
 */
export function csvTransform(header: string): Transform {
  let pending = '';
  const t = new Transform({
    writableObjectMode: true,
    transform(event: { data: { line: string } }, _enc, done) {
      pending += `${event.data.line}\r\n`;
      if (pending.length >= BATCH_CHARS) {
        const out = pending;
        pending = '';
        this.push(out);
      }
      done();
    },
    flush(done) {
      done(null, pending);
    },
  });
  // The header goes out at once, before the first batch of rows.
  t.push(header);
  return t;
}

/**
 * What the reader has taken so far: the bytes the connection handed on to the kernel. The socket's
 * `bytesWritten` also counts what waits in its own buffer (and the write under way, `writableLength`),
 * which the reader has not taken: a reader that reads nothing would otherwise be credited with a
 * buffer's worth at the start.
 */
function drained(res: Response): number {
  const s = res.socket;
  return s ? s.bytesWritten - s.writableLength : 0;
}

/**
 * The slow-reader rule as a sliding window: a sample of what the reader has taken every tick (a
 * fifth of the window, at most a second), and a cut as soon as the last `windowMs` hold fewer than
 * `minBytes` taken while the export waited on the reader at every sample (output queued,
 * `writableNeedDrain`). A fixed window checked at its end let a reader that stops reading run for
 * up to two windows (the kernel's socket buffers take the first one's bytes); the sliding one cuts
 * it within a window and a tick of its last byte taken. Time in which the query, not the reader,
 * held the export up (nothing queued) never counts against it.
 */
function slowReaderWatch(res: Response, limits: { minBytes: number; windowMs: number }, cut: () => void): NodeJS.Timeout {
  const tick = Math.max(10, Math.min(1000, Math.floor(limits.windowMs / 5)));
  // Consecutive samples taken while the reader held the export up, oldest first.
  let samples: { at: number; taken: number }[] = [];
  const timer = setInterval(() => {
    if (!res.writableNeedDrain) {
      samples = [];
      return;
    }
    const now = { at: performance.now(), taken: drained(res) };
    samples.push(now);
    // Keep one sample at or before the window's start: the window's base.
    while (samples.length > 1 && samples[1]!.at <= now.at - limits.windowMs) samples.shift();
    const base = samples[0]!;
    if (base.at <= now.at - limits.windowMs && now.taken - base.taken < limits.minBytes) {
      clearInterval(timer);
      cut();
    }
  }, tick);
  timer.unref();
  return timer;
}

export type CsvExport = {
  /** The file name offered to the browser (no path, no quotes). */
  filename: string;
  header: string;
  /** Runs the query; calls `onStream` with the row stream once it is under way; settles when the rows are handed over. */
  stream(onStream: (rows: NodeJS.ReadableStream) => void): Promise<void>;
};

/**
 * Streams a CSV export to `res` while it is read. The status and headers are set only once the query
 * is under way, so a database that cannot be reached still answers a JSON 503; after that a failure
 * can only cut the transfer short (the client sees an incomplete body). A reader that takes fewer
 * than `minBytes` in the last `windowMs` while the export waits on it is cut (slowReaderWatch), which
 * frees its slot and its connection.
 */
export async function sendCsv(deps: { logger: Logger; limits: CsvExportLimits }, res: Response, e: CsvExport, log: Record<string, unknown>): Promise<void> {
  // Settles with the failure (or null) rather than rejecting: it may fail while `reading` is awaited.
  let piping: Promise<unknown> | null = null;
  let tooSlow = false;
  let watchdog: NodeJS.Timeout | undefined;
  const reading = e.stream((rows) => {
    res.status(200);
    res.setHeader('Content-Type', 'text/csv; charset=utf-8; header=present');
    res.setHeader('Content-Disposition', `attachment; filename="${e.filename}"`);
    res.setHeader('Cache-Control', 'no-store');
    watchdog = slowReaderWatch(res, deps.limits, () => {
      tooSlow = true;
      res.destroy();
    });
    piping = pipeline(rows, csvTransform(e.header), res).then(
      () => null,
      (err: unknown) => err,
    );
  });
  try {
    const readFailure = await reading.then(
      () => null,
      (err: unknown) => err,
    );
    if (!piping) throw readFailure ?? new Error('the export stream never started');
    // The pipeline settles in every case: done, the client went away, or the row stream was destroyed.
    const sendFailure = await (piping as Promise<unknown>);
    const failure = sendFailure ?? readFailure;
    if (!failure) return;
    if (!res.destroyed) res.destroy();
    if (tooSlow) {
      deps.logger.info({ ...log, reqId: res.req.id, minBytes: deps.limits.minBytes, windowMs: deps.limits.windowMs }, 'CSV export ended: the reader took too little');
      return;
    }
    // A client that goes away shows up on both sides as a premature close; anything else is the database's.
    const dbFailed = readFailure !== null && (readFailure as { code?: string }).code !== 'ERR_STREAM_PREMATURE_CLOSE';
    deps.logger[dbFailed ? 'warn' : 'info']({ ...log, reqId: res.req.id, err: describe(dbFailed ? readFailure : failure) }, 'CSV export ended early');
  } finally {
    clearInterval(watchdog);
  }
}
