import { randomBytes } from 'node:crypto';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CAPABILITIES, roles, type Capability } from '../../src/lib/roles.ts';
import { createUser } from '../../src/modules/organisations/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// The fixture: the service's own role table plus one role, added the way a maintainer would add it (one
// entry in the table); the migration half is the CHECK widened in beforeAll. The role belongs to an
// organisation, reads its history, and holds no capability.
vi.mock('../../src/lib/roles.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/lib/roles.ts')>();
  const table = { ...real.ROLE_TABLE, auditor: { label: 'auditor', inOrganisation: true, scopes: ['history:read'], capabilities: [] } } as const;
  const book = real.roleBook(table);
  return { ...real, ROLE_TABLE: table, roles: book, roleSchema: book.schema, orgRoleSchema: book.orgRoleSchema };
});

let stack: Stack;
let org: OrgFixture;
const tokens = new Map<string, string>();

/** What each capability guards on the HTTP surface: a GET its holder is answered 200, every other role 403. */
const GUARDED: Record<Capability, string[]> = {
  administer_organisation: ['/v1/team', '/v1/api-clients'],
  keep_accounts: ['/v1/audit-events', '/v1/topups', '/v1/transactions', '/v1/usage/daily'],
  operate_platform: ['/v1/platform/organisations'],
};

beforeAll(async () => {
  stack = await startStack({ workers: false, env: { RATE_LIMIT_PER_TOKEN: '10000', RATE_LIMIT_PER_ORG: '10000' } });
  org = await stack.createOrg();
  // The migration a new role needs: the users' role CHECK lists every role of the table.
  await stack.db.query(sql.unsafe`ALTER TABLE users DROP CONSTRAINT IF EXISTS users_role_check`);
  await stack.db.query(sql.unsafe`ALTER TABLE users ADD CONSTRAINT users_role_check CHECK (role IN (${sql.join(roles.names.map((r) => sql.literalValue(r)), sql.fragment`, `)}))`);
  for (const role of roles.names) {
    const user = { username: `i30-${role.replaceAll('_', '-')}-${randomBytes(4).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}` };
    await createUser(stack.db, { orgId: roles.inOrganisation(role) ? org.orgId : null, ...user, role, requirePasswordChange: false });
    tokens.set(role, await stack.login(user.username, user.password));
  }
});
afterAll(async () => stack?.close());

describe('a role added in a fixture', () => {
  it('the fixture role is one of the roles, and holds no capability', () => {
    expect(roles.names).toContain('auditor');
    for (const capability of CAPABILITIES) expect(roles.may('auditor', capability)).toBe(false);
  });

  it('every role × every capability: the guarded routes answer 200 to a holder and 403 to every other role, the fixture role included', async () => {
    const seen: string[] = [];
    for (const role of roles.names) {
      for (const capability of CAPABILITIES) {
        for (const path of GUARDED[capability]) {
          const r = await stack.api('GET', path, { token: tokens.get(role)! });
          seen.push(`${role} ${path} ${r.status}`);
          expect(`${role} ${path} ${r.status}`).toBe(`${role} ${path} ${roles.may(role, capability) ? 200 : 403}`);
        }
      }
    }
    expect(seen.filter((s) => s.startsWith('auditor ')).every((s) => s.endsWith(' 403'))).toBe(true);
  });

  it('the fixture role signs in as itself, sees no administrator-only detail, and is never asked to enrol two-factor sign-in', async () => {
    await stack.db.query(sql.unsafe`UPDATE organisations SET require_mfa = true WHERE id = ${org.orgId}`);
    const me = await stack.api('GET', '/v1/me', { token: tokens.get('auditor')! });
    expect(me.status).toBe(200);
    expect(me.body.role).toBe('auditor');
    expect(me.body.organisation.id).toBe(org.orgId);
    expect(me.body.organisation.tenancy).toBeUndefined();
    const team = await stack.api('GET', '/v1/team', { token: tokens.get('auditor')! });
    expect(team.body).toEqual({ detail: 'Only organisation administrators may do this' });
    await stack.db.query(sql.unsafe`UPDATE organisations SET require_mfa = false WHERE id = ${org.orgId}`);
  });

  it("the token endpoint grants the fixture role its own scopes and refuses a scope beyond them", async () => {
    const username = `i30-auditor-scope-${randomBytes(4).toString('hex')}`;
    const password = `pw-${randomBytes(8).toString('hex')}`;
    await createUser(stack.db, { orgId: org.orgId, username, password, role: 'auditor' as never, requirePasswordChange: false });
    const beyond = await stack.api('POST', '/v1/login', { form: { grant_type: 'password', username, password, scope: 'history:read verify' } });
    expect(beyond.status).toBe(400);
    expect(beyond.body.error).toBe('invalid_scope');
    const own = await stack.api('POST', '/v1/login', { form: { grant_type: 'password', username, password } });
    expect(own.status).toBe(200);
    expect(own.body.scope).toBe('history:read');
  });

  it("a person's token as issued reaches only its role's scopes: the fixture role (history:read) is refused verifying, requerying and topping up (403 insufficient_scope, nothing recorded), and reads its history", async () => {
    const token = tokens.get('auditor')!;
    const made = await stack.api('POST', '/v1/verify-nin', { token: org.admin.token, json: { nin: '12345678901', reason: 'corporate' } });
    expect(made.status).toBe(200);
    const ref = made.body.data.reference_id as string;
    const calls: [string, string, Record<string, unknown> | undefined, string][] = [
      ['POST', '/v1/verify-nin', { nin: '12345678901', reason: 'corporate' }, 'verify'],
      ['POST', '/v1/verify-nin/requery', { reference_id: ref }, 'requery'],
      ['GET', `/v1/verify-nin/slip/${ref}`, undefined, 'requery'],
      ['GET', '/v1/topup/quote?units=100', undefined, 'topup'],
    ];
    for (const [method, path, json, scope] of calls) {
      const r = await stack.api(method, path, { token, ...(json ? { json } : {}) });
      // A scope only the roles keeping the accounts hold answers as their guard does.
      const body = scope === 'topup' ? { detail: 'Only organisation administrators and finance officers may do this' } : { detail: `This token lacks the scope ${scope}`, code: 'insufficient_scope' };
      expect({ path, status: r.status, body: r.body }).toEqual({ path, status: 403, body });
    }
    expect(await stack.db.anyFirst(sql.unsafe`SELECT action FROM audit_events WHERE target = ${ref} AND action IN ('verification.requeried', 'verification.slip_printed')`)).toEqual([]);
    // The scope it holds: its history (an administrator's guard still refuses the ledger, as before).
    expect((await stack.api('GET', '/v1/verifications', { token })).status).toBe(200);
    // Today's roles: a member's token as issued is refused top-up by its scope too, with the guard's answer.
    const quote = await stack.api('GET', '/v1/topup/quote?units=100', { token: org.member.token });
    expect({ status: quote.status, body: quote.body }).toEqual({ status: 403, body: { detail: 'Only organisation administrators and finance officers may do this' } });
  });

  it('an API client whose creator holds the fixture role (no administration) is suspended, by the SQL that reads the role list from the table', async () => {
    const creator = { username: `i30-creator-${randomBytes(4).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}` };
    const row = await createUser(stack.db, { orgId: org.orgId, ...creator, role: 'org_admin', requirePasswordChange: false });
    const created = await stack.api('POST', '/v1/api-clients', { token: await stack.login(creator.username, creator.password), json: { name: 'i30 client', role: 'member' } });
    expect(created.status).toBe(201);
    const grant = { grant_type: 'client_credentials', client_id: created.body.client_id, client_secret: created.body.client_secret };
    expect((await stack.api('POST', '/v1/login', { form: grant })).status).toBe(200);
    await stack.db.query(sql.unsafe`UPDATE users SET role = 'auditor' WHERE id = ${row.id}`);
    const refused = await stack.api('POST', '/v1/login', { form: grant });
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('api_client_suspended');
  });
});
