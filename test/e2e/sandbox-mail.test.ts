import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createDb } from '../../src/lib/db.ts';
import { createUser } from '../../src/modules/organisations/index.ts';
import { startNpmStart, type NpmStart } from '../setup/npm-start.ts';
import { waitFor } from '../setup/wait.ts';

// In the sandbox, `npm start` keeps the e-mails the service sends where the person trying it can read
// them: an SMTP sink on a local port, listed newest first at the identity simulator's /sandbox/mail,
// whose address the start banner prints.

let s: NpmStart;
beforeAll(async () => {
  s = await startNpmStart();
  await s.waitForOutput('api listening');
  await s.waitForOutput('workers started');
}, 120_000);
afterAll(async () => {
  if (!s) return;
  const exited = new Promise((resolve) => s.proc.once('exit', resolve));
  s.proc.kill('SIGTERM');
  await exited;
  await s.cleanup();
});

type Mail = { id: number; received_at: string; from: string; to: string[]; subject: string; text: string };

it('When a password reset is asked in the sandbox, then the e-mail is listed at the identity simulator, newest first, as the banner says', { timeout: 60_000 }, async () => {
  const mailUrl = `http://127.0.0.1:${s.ports.identity}/sandbox/mail`;
  expect(s.output()).toContain(`e-mails: ${mailUrl}`);
  expect(s.output()).toContain(`SMTP sink on 127.0.0.1:${s.ports.smtp}`);
  expect(s.output()).toContain(`portal:  http://localhost:${s.ports.api}/portal/  (sign in with the demo accounts)`);

  const username = `mailbox-${randomBytes(3).toString('hex')}`;
  const email = `${username}@example.com`;
  const pool = await createDb(s.databaseUrl, { maxPoolSize: 1 });
  try {
    await createUser(pool, { orgId: null, username, password: `pw-${randomBytes(8).toString('hex')}`, role: 'platform_admin', email });
  } finally {
    await pool.end();
  }
  const forgot = () =>
    fetch(`http://127.0.0.1:${s.ports.api}/v1/forgot-password`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username }) });
  expect((await forgot()).status).toBe(202);
  const first = await waitFor(async () => ((await (await fetch(mailUrl)).json()) as { data: Mail[] }).data.find((m) => m.to.includes(email)), {
    what: 'the reset e-mail in the sink',
    timeoutMs: 20_000,
  });
  expect(first.subject).toBe('Reset your password');
  expect(first.text).toMatch(/[A-Za-z0-9_-]{40,}/);

  expect((await forgot()).status).toBe(202);
  const both = await waitFor(async () => {
    const r = await fetch(mailUrl);
    expect(r.status).toBe(200);
    const mine = ((await r.json()) as { data: Mail[] }).data.filter((m) => m.to.includes(email));
    return mine.length === 2 ? mine : null;
  }, { what: 'the second reset e-mail', timeoutMs: 20_000 });
  // Newest first.
  expect(both[0]!.id).toBeGreaterThan(both[1]!.id);
  expect(both[1]!.id).toBe(first.id);
  expect(both[0]!.received_at >= both[1]!.received_at).toBe(true);
});
