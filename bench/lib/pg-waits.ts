import pg from 'pg';

/**
 * Samples what the benchmark database's backends are doing (pg_stat_activity) every `intervalMs`:
 * running, waiting for a row lock held by another transaction (Lock), flushing WAL at commit
 * (IO/LWLock WAL*), or idle inside a transaction waiting for the client's next statement
 * (Client:ClientRead while "idle in transaction"). The shares show where the hot wallet row's time goes.
 */
export class PgWaitSampler {
  private timer: NodeJS.Timeout | undefined;
  private client: pg.Client;
  private busy = false;
  readonly counts = new Map<string, number>();
  /** What the transactions that others wait for are doing (state, wait, statement), per sample. */
  readonly blockers = new Map<string, number>();
  samples = 0;
  private readonly dbName: string;

  constructor(databaseUrl: string) {
    this.client = new pg.Client({ connectionString: databaseUrl });
    this.dbName = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
  }

  async start(intervalMs = 50): Promise<this> {
    await this.client.connect();
    this.timer = setInterval(() => void this.sample(), intervalMs);
    return this;
  }

  private async sample(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const r = await this.client.query<{ state: string | null; wait: string | null; n: string }>(
        `SELECT state, COALESCE(wait_event_type || ':' || wait_event, 'running') AS wait, count(*) AS n
         FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND state IS NOT NULL AND state <> 'idle'
         GROUP BY 1, 2`,
        [this.dbName],
      );
      this.samples++;
      const b = await this.client.query<{ what: string; n: string }>(
        `SELECT a.state || ' | ' || COALESCE(a.wait_event_type || ':' || a.wait_event, 'on CPU') || ' | ' || left(regexp_replace(a.query, '\\s+', ' ', 'g'), 70) AS what, count(*) AS n
         FROM pg_stat_activity a
         WHERE a.pid IN (SELECT unnest(pg_blocking_pids(w.pid)) FROM pg_stat_activity w WHERE w.datname = $1 AND w.wait_event_type = 'Lock')
         GROUP BY 1`,
        [this.dbName],
      );
      for (const row of b.rows) this.blockers.set(row.what, (this.blockers.get(row.what) ?? 0) + Number(row.n));
      for (const row of r.rows) {
        const key = row.state === 'idle in transaction' ? 'idle in transaction (waiting for the client)' : row.wait!;
        this.counts.set(key, (this.counts.get(key) ?? 0) + Number(row.n));
      }
    } catch {
      // A sample lost is fine.
    } finally {
      this.busy = false;
    }
  }

  /** Mean number of backends in each state per sample, largest first (and the lock holders' activity). */
  async stop(): Promise<Record<string, number>> {
    clearInterval(this.timer);
    await this.client.end().catch(() => undefined);
    const n = Math.max(1, this.samples);
    const mean = (m: Map<string, number>, prefix: string, k: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([key, v]) => [`${prefix}${key}`, Math.round((v / n) * 100) / 100]);
    return Object.fromEntries([...mean(this.counts, '', 8), ...mean(this.blockers, 'lock holder: ', 4)]);
  }
}
