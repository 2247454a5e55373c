/**
 * `npm run bench:csv`: the ledger's CSV export streams. Seeds 1,000,000 ledger lines on one
 * organisation and 10,000 on another, starts the API as the Procfile runs it, and exports both as
 * CSV while sampling the API process's peak RSS (VmHWM from /proc). Shows that
 * - exporting 1,000,000 lines raises the API's peak RSS by no more than 20 MB over exporting 10,000;
 * - the first byte reaches the client while the export query is still running in PostgreSQL.
 * Prints one JSON line per export and a summary line; writes its section of bench/RESULTS.md.
 */
import os from 'node:os';
import pg from 'pg';
import { sql } from 'slonik';
import { z } from 'zod';
import { startBenchStack, type BenchStack } from './lib/stack.ts';
import { procMemory } from './lib/proc.ts';
import { writeResultsSection } from './lib/report.ts';

const BIG = Number(process.env.BENCH_CSV_LINES ?? 1_000_000);
const SMALL = 10_000;
const LIMIT_MB = 20;
const SEED_CHUNK = 200_000;
const HEADER_BYTES = 'id,kind,amount,vat_amount,service_charge,units_delta,units_before,units_after,reference,details,created_at\r\n'.length;

const q = sql.type(z.record(z.string(), z.any()));

/** Appends `n` adjustment lines (+1 unit each) in INSERT ... SELECT generate_series chunks. */
async function seed(stack: BenchStack, orgId: number, n: number): Promise<void> {
  for (let done = 0; done < n; done += SEED_CHUNK) {
    const size = Math.min(SEED_CHUNK, n - done);
    await stack.db.query(q`
      INSERT INTO wallet_transactions (org_id, kind, amount, units_delta, units_before, units_after, details, created_at)
      SELECT ${orgId}, 'adjustment', 0, 1, ${done} + g - 1, ${done} + g, jsonb_build_object('note', 'bench line ' || (${done} + g)),
             timestamptz '2026-01-01T00:00:00Z' + (${done} + g) * interval '1 second'
      FROM generate_series(1, ${size}) g`);
  }
}

type ExportReport = {
  export: string;
  lines: number;
  bytes: number;
  first_byte_ms: number;
  first_rows_ms: number;
  total_ms: number;
  query_running_at_first_rows: boolean;
  api_rss_mb_after: number;
  api_peak_rss_mb: number;
};

/** Reads the export as a client would, counting lines without keeping them. */
async function exportCsv(stack: BenchStack, token: string, label: string, probe: pg.Client): Promise<ExportReport> {
  const pid = stack.children.api!.pid;
  const started = performance.now();
  const res = await fetch(`${stack.apiUrl}/v1/transactions`, { headers: { authorization: `Bearer ${token}`, accept: 'text/csv' } });
  if (res.status !== 200) throw new Error(`${label}: HTTP ${res.status} ${await res.text()}`);
  const reader = res.body!.getReader();
  let lines = 0;
  let bytes = 0;
  let firstByteMs = -1;
  let firstRowsMs = -1;
  let queryRunning = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (firstByteMs < 0) firstByteMs = performance.now() - started;
    // The header goes out as soon as the query is sent; the first chunk past it carries rows.
    if (firstRowsMs < 0 && bytes + value.byteLength > HEADER_BYTES) {
      firstRowsMs = performance.now() - started;
      // Is PostgreSQL still executing the export (its portal open, more rows to fetch)?
      const r = await probe.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'
           AND query LIKE '%FROM wallet_transactions WHERE org_id%ORDER BY id DESC'`,
      );
      queryRunning = r.rows[0].n > 0;
    }
    bytes += value.byteLength;
    for (let i = 0; i < value.byteLength; i++) if (value[i] === 10) lines++;
  }
  const totalMs = performance.now() - started;
  const mem = procMemory(pid)!;
  return {
    export: label,
    lines,
    bytes,
    first_byte_ms: Math.round(firstByteMs),
    first_rows_ms: Math.round(firstRowsMs),
    total_ms: Math.round(totalMs),
    query_running_at_first_rows: queryRunning,
    api_rss_mb_after: Math.round(mem.rssKb / 1024),
    api_peak_rss_mb: Math.round((mem.hwmKb / 1024) * 10) / 10,
  };
}


const stack = await startBenchStack({ workers: false });
const probe = new pg.Client({ connectionString: stack.databaseUrl });
try {
  await probe.connect();
  const big = await stack.createOrg();
  const small = await stack.createOrg();
  const seedStart = performance.now();
  await seed(stack, big.orgId, BIG);
  await seed(stack, small.orgId, SMALL);
  await stack.db.query(q`VACUUM ANALYZE wallet_transactions`);
  const seedMs = Math.round(performance.now() - seedStart);
  process.stderr.write(`seeded ${BIG} + ${SMALL} ledger lines in ${seedMs} ms\n`);

  const reports: ExportReport[] = [];
  // The first small export warms the process up (code paths, pools); the second is the yardstick.
  for (const label of [`${SMALL} lines (warm-up)`, `${SMALL} lines`]) {
    const r = await exportCsv(stack, small.admin.token, label, probe);
    reports.push(r);
    process.stdout.write(`${JSON.stringify(r)}\n`);
  }
  const r = await exportCsv(stack, big.admin.token, `${BIG} lines`, probe);
  reports.push(r);
  process.stdout.write(`${JSON.stringify(r)}\n`);

  const small2 = reports[1]!;
  const growth = Math.round((r.api_peak_rss_mb - small2.api_peak_rss_mb) * 10) / 10;
  const summary = {
    summary: 'csv-export',
    lines_ok: small2.lines === SMALL + 1 && r.lines === BIG + 1,
    peak_rss_growth_mb: growth,
    peak_rss_growth_limit_mb: LIMIT_MB,
    memory_ok: growth <= LIMIT_MB,
    first_byte_before_query_end: r.query_running_at_first_rows && r.first_rows_ms < r.total_ms,
    seed_ms: seedMs,
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);

  const rows = reports.map(
    (x) =>
      `| ${x.export} | ${x.lines.toLocaleString('en')} | ${(x.bytes / 1e6).toFixed(1)} MB | ${x.first_byte_ms} ms | ${x.first_rows_ms} ms | ${x.total_ms} ms | ` +
      `${x.query_running_at_first_rows ? 'yes' : 'no'} | ${x.api_rss_mb_after} MB | ${x.api_peak_rss_mb} MB |`,
  );
  const section = [
    '## Ledger CSV export (`npm run bench:csv`)',
    '',
    `Run at ${new Date().toISOString()} on ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), Node ${process.version}; load average ${os.loadavg()[0]!.toFixed(2)} at the end of the run.`,
    `The API (\`node src/server.ts\`, LOG_LEVEL=warn) exports one organisation's ledger with \`Accept: text/csv\`; the client reads the body as it arrives.`,
    '',
    '| export | CSV lines (with header) | size | first byte (header) | first rows | whole body | export query still running when the first rows arrived | API RSS after | API peak RSS (VmHWM) |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `Peak RSS growth from ${SMALL.toLocaleString('en')} to ${BIG.toLocaleString('en')} lines: **${growth} MB** (limit ${LIMIT_MB} MB: ${summary.memory_ok ? 'met' : 'MISSED'}). ` +
      `Rows reached the client while the query was still running: ${summary.first_byte_before_query_end ? 'yes' : 'NO'}. ` +
      `Rows are fetched through a server-side cursor (slonik \`stream\`, pg-query-stream, 100 rows a batch) and written with backpressure, so the process holds a few batches at a time whatever the ledger's length.`,
  ].join('\n');
  writeResultsSection('csv-export', section);
  process.stderr.write('written bench/RESULTS.md (section csv-export)\n');
  if (!summary.memory_ok || !summary.first_byte_before_query_end || !summary.lines_ok) process.exitCode = 1;
} finally {
  await probe.end().catch(() => undefined);
  await stack.stop();
}
