// Waiting for an event instead of sleeping a fixed time: poll until the thing that proves it
// happened is visible, with a deadline. A test then asserts on what it saw.

/** Polls `probe` until it returns a truthy value and returns that value; throws naming `what` past the deadline. */
export async function waitFor<T>(
  probe: () => T | Promise<T>,
  o: { what: string; timeoutMs?: number; intervalMs?: number },
): Promise<NonNullable<T>> {
  const deadline = Date.now() + (o.timeoutMs ?? 10_000);
  for (;;) {
    const v = await probe();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`not within ${o.timeoutMs ?? 10_000} ms: ${o.what}`);
    await new Promise((r) => setTimeout(r, o.intervalMs ?? 50));
  }
}

/** Polls `fn` until `ok` holds or the deadline passes, and returns the last value either way (the caller asserts on it). */
export async function until<T>(fn: () => T | Promise<T>, ok: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}
