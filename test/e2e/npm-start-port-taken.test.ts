import { createServer, type Server } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { alive, freePort, portIsFree, startNpmStart, type NpmStart } from '../setup/npm-start.ts';
import { waitFor } from '../setup/wait.ts';

// `npm start` meeting a port another process holds (a second sandbox on the same machine) says so in
// one line naming the variable, exits 78 as for a bad value, and leaves nothing of its own running.

let started: NpmStart | undefined;
let occupant: Server | undefined;
afterEach(async () => {
  await started?.cleanup();
  started = undefined;
  await new Promise<void>((resolve) => (occupant ? occupant.close(() => resolve()) : resolve()));
  occupant = undefined;
});

async function occupy(host: string): Promise<number> {
  const port = await freePort();
  occupant = createServer();
  await new Promise<void>((resolve) => occupant!.listen(port, host, () => resolve()));
  return port;
}

/** The lines of stderr, but configuration warnings (the development secrets), which come before anything starts. */
const errorLines = (s: NpmStart) => s.stderr().split('\n').filter((l) => l !== '' && !l.startsWith('warning: '));

async function expectStoppedWith78(s: NpmStart, line: string, freedPorts: number[]): Promise<void> {
  const code = await new Promise<number | null>((resolve) => (s.proc.exitCode !== null ? resolve(s.proc.exitCode) : s.proc.once('exit', (c) => resolve(c))));
  expect(code).toBe(78);
  expect(errorLines(s)).toEqual([line]);
  expect(s.output()).not.toMatch(/EADDRINUSE|\n\s+at /);
  // Nothing of the tree is left: each process it had is gone, and the ports it had opened are free.
  await waitFor(() => s.seen().every((p) => !alive(p)), { what: 'every process of the tree gone', timeoutMs: 5_000 });
  for (const port of freedPorts) expect(await portIsFree(port), `port ${port}`).toBe(true);
}

it('When the mail sink port is taken, then npm start prints one line naming SANDBOX_SMTP_PORT, exits 78, and leaves nothing running', { timeout: 120_000 }, async () => {
  const smtp = await occupy('127.0.0.1');
  started = await startNpmStart({ ports: { smtp } });
  await expectStoppedWith78(started, `SANDBOX_SMTP_PORT: 127.0.0.1:${smtp} is in use; set another port`, [started.ports.api, started.ports.identity, started.ports.payment]);
});

it('When the identity simulator port is taken after the mail sink opened, then one line naming IDENTITY_SIM_PORT, exit 78, and the mail sink closed', { timeout: 120_000 }, async () => {
  const identity = await occupy('127.0.0.1');
  started = await startNpmStart({ ports: { identity } });
  await expectStoppedWith78(started, `IDENTITY_SIM_PORT: 127.0.0.1:${identity} is in use; set another port`, [started.ports.api, started.ports.smtp, started.ports.payment]);
});

it('When the API port is taken, then the API process says so naming PORT, the launcher stops its worker and simulators and exits 78', { timeout: 180_000 }, async () => {
  const api = await occupy('0.0.0.0');
  started = await startNpmStart({ ports: { api } });
  // The API child is started after the simulators: they were open when it failed.
  await expectStoppedWith78(started, `PORT: 0.0.0.0:${api} is in use; set another port`, [started.ports.identity, started.ports.smtp, started.ports.payment]);
  expect(started.output()).toContain('SANDBOX: identity authority is the built-in simulator');
});
