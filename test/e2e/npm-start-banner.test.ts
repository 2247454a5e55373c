import { afterEach, expect, it } from 'vitest';
import { freePort, startNpmStart, stopNpmStart, type NpmStart } from '../setup/npm-start.ts';

// The start-up banner says where the portal is on every start: in the sandbox with its mailbox, and
// with SMTP_URL set (no mailbox) at the public address.

let s: NpmStart | undefined;
afterEach(async () => {
  await stopNpmStart(s);
  s = undefined;
});

it('When npm start runs with SMTP_URL and a public address set, then the banner still prints the API and the portal at that address, and no sandbox mailbox', { timeout: 90_000 }, async () => {
  s = await startNpmStart({ env: { SMTP_URL: `smtp://127.0.0.1:${await freePort()}`, PUBLIC_BASE_URL: 'https://verify.example.test' } });
  await s.waitForOutput('=========================================================\n', 60_000);
  expect(s.output()).toContain('API:     https://verify.example.test/v1  (documentation: https://verify.example.test/docs)');
  expect(s.output()).toContain('portal:  https://verify.example.test/portal/  (sign in with the demo accounts)');
  expect(s.output()).not.toContain('e-mails:');
});
