import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

// An event records the address of the request that caused it even when that request's connection
// is gone by the time the event is written: a caller who resets the connection right after a
// destructive request (revoking an API client, disabling an administrator) must not leave the trail
// without its address.

let stack: Stack;
let org: OrgFixture;

beforeAll(async () => {
  stack = await startStack({ workers: false });
  org = await stack.createOrg({ units: 0 });
});
afterAll(async () => stack?.close());

const event = z.object({ action: z.string(), ip: z.string().nullable() });

describe('audit origin of a request whose connection was reset', () => {
  it('When a caller resets the connection while its revocation of an API client waits, then the api_client.revoked event still carries its address', async () => {
    const created = await stack.api('POST', '/v1/api-clients', { token: org.admin.token, json: { name: 'to revoke', role: 'member' } });
    expect(created.status).toBe(201);
    const clientId = created.body.client_id as string;
    const requestId = `i29-r-${randomBytes(6).toString('hex')}`;
    const { hostname, port } = new URL(stack.url);

    await stack.db.connect(async (tx) => {
      // The revocation waits for this lock: its event is written only after the reset below.
      await tx.query(sql.unsafe`BEGIN`);
      await tx.query(sql.unsafe`SELECT 1 FROM api_clients WHERE client_id = ${clientId} FOR UPDATE`);
      const socket = net.connect(Number(port), hostname);
      socket.on('error', () => undefined);
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      socket.write(`DELETE /v1/api-clients/${clientId} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${org.admin.token}\r\nX-Request-Id: ${requestId}\r\nContent-Length: 0\r\n\r\n`);
      // Asked on another connection: a transaction sees pg_stat_activity as of its first look.
      await waitFor(
        () => stack.db.maybeOne(sql.unsafe`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%UPDATE api_clients%'`),
        { what: 'the revocation waiting for the lock' },
      );
      socket.resetAndDestroy();
      // A request answered after the reset: the server has seen the reset by then.
      expect((await stack.api('GET', '/v1/me', { token: org.admin.token })).status).toBe(200);
      await tx.query(sql.unsafe`COMMIT`);
    });

    const row = await waitFor(() => stack.db.maybeOne(sql.type(event)`SELECT action, ip FROM audit_events WHERE request_id = ${requestId}`), { what: 'the revocation event' });
    expect(row.action).toBe('api_client.revoked');
    expect(row.ip).toMatch(/127\.0\.0\.1$/);
  });
});
