/**
 * Logs in, verifies a fixture NIN (free, no upstream call) and starts a wallet top-up.
 *
 *   BASE_URL=http://localhost:8080 IDV_USERNAME=... IDV_PASSWORD=... node clients/typescript/examples/quickstart.ts
 *
 * The top-up step needs an organisation administrator; a team member is told so and stops there.
 */
import { randomUUID } from 'node:crypto';
import { ApiError, createClient } from '../src/index.ts';

const baseUrl = process.env.BASE_URL ?? 'http://localhost:8080';
const username = process.env.IDV_USERNAME;
const password = process.env.IDV_PASSWORD;
if (!username || !password) {
  console.error('Set IDV_USERNAME and IDV_PASSWORD (and BASE_URL, default http://localhost:8080).');
  process.exit(2);
}

const client = createClient({ baseUrl });

try {
  const token = await client.login(username, password);
  console.log(`logged in; token valid ${token.expires_in} s`);

  const me = await client.me();
  console.log(`organisation: ${me.organisation?.name ?? '(none)'}; role: ${me.role}`);

  const { data: reasons } = await client.reasons();
  console.log(`reasons: ${reasons.map((r) => r.key).join(', ')}`);

  // 12345678901 is a fixture NIN: a full sample record, 0 units debited. The Idempotency-Key makes
  // a retry after a network failure return the same answer instead of verifying twice.
  const { data: person } = await client.verifyNin({ nin: '12345678901', reason: 'corporate' }, { idempotencyKey: randomUUID() });
  console.log(`verified: reference_id=${person.reference_id} name=${person.fname} ${person.lname}`);

  const again = await client.requery(person.reference_id);
  console.log(`requery: ${again.status}`);

  if (me.role !== 'org_admin') {
    console.log('top-up skipped: only an organisation administrator can start one');
  } else {
    const units = me.organisation?.min_topup_units ?? 100;
    const topup = await client.initializeTopup(units);
    console.log(`top-up started: reference=${topup.reference} units=${topup.units} total=${topup.total_amount} kobo (${topup.currency})`);
    console.log(`pay at: ${topup.authorization_url}`);
    console.log(`then, optionally: client.verifyTopup('${topup.reference}')`);
  }
} catch (err) {
  if (err instanceof ApiError) {
    console.error(`API error ${err.status}: ${err.detail}${err.requestId ? ` (request id ${err.requestId})` : ''}`);
    process.exit(1);
  }
  throw err;
}
