import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { inject, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/lib/logger.ts';
import { createApiDeps } from '../../src/wiring.ts';
import { startTcpProxy } from '../chaos/tcp-proxy.ts';
import { createTestDatabase, testConfig } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

it("When Redis is cut and the API's connections are reconnecting, then closing the API still ends (BullMQ's own close waits for an 'end' such a connection never emits)", async () => {
  const redisUrl = inject('redisUrl');
  const target = new URL(redisUrl);
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
  const database = await createTestDatabase();
  try {
    const config = testConfig({ DATABASE_URL: database.url, REDIS_URL: proxy.url(redisUrl), REDIS_PREFIX: `${inject('runId')}-close-${randomBytes(3).toString('hex')}` });
    const lines: { msg: string; connection?: string }[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } });
    const unhandled = vi.spyOn(console, 'error');
    const deps = await createApiDeps(config, logger);
    proxy.cut();
    // The connections noticed and are trying again (each try refused): the state the close hung in.
    await waitFor(() => proxy.stats().refused >= 6, { what: 'reconnection attempts while Redis is cut', timeoutMs: 30_000 });
    await deps.close();
    expect(proxy.isCut).toBe(true);
    // Said once per connection through the logger, never printed to stderr by ioredis or BullMQ.
    const failed = lines.filter((l) => l.msg === 'Redis connection failed: retrying').map((l) => l.connection);
    expect(failed.length).toBeGreaterThan(0);
    expect(new Set(failed).size).toBe(failed.length);
    expect(unhandled.mock.calls.map((c) => String(c[0]).slice(0, 80))).toEqual([]);
    unhandled.mockRestore();
  } finally {
    proxy.restore();
    await proxy.close();
    await database.drop();
  }
});

it('When a process is asked to stop and its stopping never ends, then it logs why and exits 1 at its deadline', async () => {
  const script = [
    "import { stopOnSignals } from './src/lib/process.ts';",
    "import { createLogger } from './src/lib/logger.ts';",
    "stopOnSignals(() => new Promise(() => {}), createLogger({ level: 'info', name: 'stuck' }), 200);",
    'setInterval(() => {}, 1000);',
    "console.log('READY');",
  ].join('\n');
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await waitFor(() => out.includes('READY'), { what: 'the child ready', timeoutMs: 30_000 });
  child.kill('SIGTERM');
  expect(await exited).toBe(1);
  expect(out).toContain('shutdown did not finish in time: exiting');
  expect(out).toContain('"deadline_ms":200');
});
