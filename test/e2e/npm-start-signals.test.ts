import { afterAll, beforeAll, expect, it } from 'vitest';
import { alive, descendantsOf, portIsFree, startNpmStart, type NpmStart } from '../setup/npm-start.ts';
import { waitFor } from '../setup/wait.ts';

// `npm start` stopped with SIGTERM or SIGINT stops everything it started: the API and worker
// processes finish gracefully, the simulators and the mail sink close, every port is free again.

let started: NpmStart | undefined;
afterAll(async () => started?.cleanup());

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  it(`When npm start gets ${signal}, then its API, worker and simulators stop gracefully and every port is free within 15 s`, { timeout: 120_000 }, async () => {
    started = await startNpmStart();
    const s = started;
    await s.waitForOutput('api listening');
    await s.waitForOutput('workers started');
    const npmPid = s.proc.pid!;
    const tree = descendantsOf(npmPid);
    // npm, the launcher, one API and one worker process (a shell in between would be one more).
    expect(tree.length).toBeGreaterThanOrEqual(3);
    const ports = Object.values(s.ports);
    for (const port of ports) expect(await portIsFree(port), `port ${port} in use while running`).toBe(false);

    const exited = new Promise<number | null>((resolve) => s.proc.once('exit', (code) => resolve(code)));
    const killedAt = Date.now();
    process.kill(npmPid, signal);
    await waitFor(async () => (await Promise.all(ports.map(portIsFree))).every(Boolean), { what: 'every port free', timeoutMs: 15_000, intervalMs: 100 });
    await waitFor(() => tree.every((p) => !alive(p)), { what: 'every process of the tree gone', timeoutMs: 15_000 - (Date.now() - killedAt), intervalMs: 100 });
    expect(await exited).toBe(0);
    expect(s.output()).toContain('api stopped');
    expect(s.output()).toContain('workers stopped');
    await s.cleanup();
    started = undefined;
  });
}
