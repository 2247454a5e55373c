import { readFileSync } from 'node:fs';

/**
 * A burst of identical POSTs sent from a process of its own (BURST_URL, BURST_TOKEN, BURST_BODY_FILE,
 * BURST_COUNT), so that the process timing the bystanders does not also spend its event loop sending
 * them: every other scenario's load generator runs apart from what it measures, and so does this one.
 * Prints `{"fired": N}` once every request is under way, and `{"statuses": {...}}` when they have all
 * ended or at SIGTERM (those still running are aborted and not counted).
 */
const url = process.env.BURST_URL!;
const token = process.env.BURST_TOKEN!;
const body = readFileSync(process.env.BURST_BODY_FILE!, 'utf8');
const count = Number(process.env.BURST_COUNT ?? '200');

const statuses: Record<string, number> = {};
const abort = new AbortController();
let reported = false;
const report = () => {
  if (reported) return;
  reported = true;
  process.stdout.write(`${JSON.stringify({ statuses })}\n`);
};
process.once('SIGTERM', () => {
  abort.abort();
  report();
  process.exit(0);
});

const sent = Array.from({ length: count }, async () => {
  try {
    const r = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body, signal: abort.signal });
    await r.arrayBuffer();
    statuses[r.status] = (statuses[r.status] ?? 0) + 1;
  } catch {
    // Aborted at SIGTERM: the bystanders were done; not counted.
  }
});
process.stdout.write(`${JSON.stringify({ fired: count })}\n`);
await Promise.allSettled(sent);
report();
