import { readFileSync, writeFileSync } from 'node:fs';

/**
 * The multi-tenant load generator, run as its own process (never inside the service's):
 * `node bench/tenants-load.ts <spec.json> <out.json>`. Each tenant either keeps N verifications in flight
 * (closed loop: a new request as soon as one is answered) or sends at a fixed rate whatever the
 * answers do (open loop). Every request is recorded by when it STARTED, whenever (or whether) it
 * ended, so a request that hangs past the run is counted, not lost. Writes the records as JSON.
 */
export type TenantSpec = {
  name: string;
  token: string;
  mode: 'closed' | 'open';
  /** Closed loop: requests kept in flight. */
  concurrency?: number;
  /** Open loop: requests started per second, evenly spaced. */
  rate?: number;
  /** NINs sent in turn; absent: a fresh live NIN per request. */
  nins?: string[];
  startAtS?: number;
  stopAtS: number;
};

export type LoadRecord = { startMs: number; ms: number | null; status: number; nin: string; code?: string; referenceId?: string };
export type TenantsSpec = { url: string; tenants: TenantSpec[]; timeoutS: number };
export type TenantsResult = Record<string, LoadRecord[]>;
/** What the generator writes: the records, and the wall-clock time its `startMs` values count from. */
export type TenantsRun = { t0WallMs: number; tenants: TenantsResult };

export function randomLiveNin(): string {
  // Never starting 0 (not found) or 5 (the simulator's fault NINs).
  let s = '12346789'[Math.floor(Math.random() * 8)]!;
  for (let i = 0; i < 10; i++) s += Math.floor(Math.random() * 10);
  return s;
}

async function once(url: string, t: TenantSpec, nin: string, t0: number, timeoutS: number): Promise<LoadRecord> {
  const startMs = performance.now() - t0;
  try {
    const res = await fetch(`${url}/v1/verify-nin`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ nin, reason: 'corporate' }),
      signal: AbortSignal.timeout(timeoutS * 1000),
    });
    const text = await res.text();
    const ms = performance.now() - t0 - startMs;
    let code: string | undefined;
    let referenceId: string | undefined;
    try {
      const body = JSON.parse(text) as { code?: string; reference_id?: string; data?: { reference_id?: string } };
      code = body.code;
      referenceId = body.reference_id ?? body.data?.reference_id;
    } catch {
      // Not JSON: the status says enough.
    }
    return { startMs, ms, status: res.status, nin, ...(code ? { code } : {}), ...(referenceId ? { referenceId } : {}) };
  } catch {
    return { startMs, ms: null, status: 0, nin };
  }
}

export async function runTenants(spec: TenantsSpec): Promise<TenantsRun> {
  const t0 = performance.now();
  const t0WallMs = Date.now();
  const out: TenantsResult = {};
  const pending: Promise<unknown>[] = [];
  for (const t of spec.tenants) {
    const records: LoadRecord[] = [];
    out[t.name] = records;
    let i = 0;
    const nextNin = () => (t.nins ? t.nins[i++ % t.nins.length]! : randomLiveNin());
    const at = (s: number) => new Promise((r) => setTimeout(r, Math.max(0, t0 + s * 1000 - performance.now())));
    if (t.mode === 'closed') {
      const loop = async () => {
        await at(t.startAtS ?? 0);
        while (performance.now() - t0 < t.stopAtS * 1000) records.push(await once(spec.url, t, nextNin(), t0, spec.timeoutS));
      };
      for (let c = 0; c < (t.concurrency ?? 1); c++) pending.push(loop());
    } else {
      const sender = async () => {
        const start = t.startAtS ?? 0;
        const n = Math.floor((t.stopAtS - start) * (t.rate ?? 1));
        for (let k = 0; k < n; k++) {
          await at(start + k / (t.rate ?? 1));
          pending.push(once(spec.url, t, nextNin(), t0, spec.timeoutS).then((r) => records.push(r)));
        }
      };
      pending.push(sender());
    }
  }
  // Open-loop sends add to `pending` while it is awaited: wait until nothing new was added.
  for (let seen = 0; seen !== pending.length; ) {
    seen = pending.length;
    await Promise.all(pending.slice(0));
  }
  for (const records of Object.values(out)) records.sort((a, b) => a.startMs - b.startMs);
  return { t0WallMs, tenants: out };
}

if (import.meta.main) {
  const spec = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as TenantsSpec;
  const result = await runTenants(spec);
  // Thousands of records: a file, not a pipe line that arrives in pieces.
  writeFileSync(process.argv[3]!, JSON.stringify(result));
  // Node's fetch keeps as many connections per origin as there are requests in flight.
  process.exit(0);
}
