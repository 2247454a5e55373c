import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/lib/passwords.ts';
import { createUser, setUserDisabled } from '../../src/modules/organisations/index.ts';
import { startStack, type ApiResponse, type OrgFixture, type Stack } from '../setup/harness.ts';

// Guessing passwords, measured: counters per username and client address and per address, taken
// before the password is checked; the queue board's Basic sign-in on the same counters.

const MAX = 5;
const PER_ADDRESS = 8;

let stack: Stack;
let org: OrgFixture;
let unproxied: Stack;
beforeAll(async () => {
  [stack, unproxied] = await Promise.all([
    startStack({ workers: false, env: { LOGIN_MAX_FAILURES: String(MAX), LOGIN_MAX_FAILURES_PER_ADDRESS: String(PER_ADDRESS), TRUST_PROXY: 'loopback, 10.0.0.0/8' } }),
    startStack({ workers: false, env: { LOGIN_MAX_FAILURES: String(MAX) } }),
  ]);
  org = await stack.createOrg();
});
afterAll(async () => {
  await stack?.close();
  await unproxied?.close();
});

let octet = 0;
/** A fresh documentation-range client address for each scenario. */
const address = () => `203.0.113.${++octet}`;
const tally = (rs: ApiResponse[]) => rs.reduce<Record<number, number>>((t, r) => ({ ...t, [r.status]: (t[r.status] ?? 0) + 1 }), {});

function login(s: Stack, username: string, password: string, from?: string) {
  return s.api('POST', '/v1/login', { form: { username, password }, headers: from ? { 'x-forwarded-for': from } : {} });
}

function board(username: string, password: string, from: string) {
  const authorization = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  return stack.api('GET', '/admin/queues/api/queues', { headers: { authorization, 'x-forwarded-for': from } });
}

async function newUser(role: 'member' | 'platform_admin' = 'member') {
  const u = { username: `u-${randomBytes(4).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}` };
  await createUser(stack.db, { orgId: role === 'platform_admin' ? null : org.orgId, ...u, role });
  return u;
}

describe('POST /login under guessing', () => {
  it('When 30 wrong passwords for one username arrive in parallel, then exactly LOGIN_MAX_FAILURES get 401 and the rest 429', async () => {
    const victim = await newUser();
    const from = address();
    const rs = await Promise.all(Array.from({ length: 30 }, (_, i) => login(stack, victim.username, `wrong-${i}`, from)));
    expect(tally(rs)).toEqual({ 401: MAX, 429: 30 - MAX });
    for (const r of rs.filter((x) => x.status === 429)) {
      expect(r.body).toEqual({ detail: 'Too many requests, retry later' });
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    // The right password from the guessing address is refused too: the pair is locked.
    expect((await login(stack, victim.username, victim.password, from)).status).toBe(429);
  });

  it('When an attacker on another X-Forwarded-For address has locked a username, then its owner still signs in from their own address', async () => {
    const victim = await newUser();
    const attacker = address();
    const rs = await Promise.all(Array.from({ length: 12 }, () => login(stack, victim.username, 'not-it-at-all', attacker)));
    expect(tally(rs)).toEqual({ 401: MAX, 429: 12 - MAX });
    expect((await login(stack, victim.username, victim.password, address())).status).toBe(200);
    expect((await login(stack, victim.username, victim.password, attacker)).status).toBe(429);
  });

  it('When the request passed through a trusted proxy, then the first untrusted X-Forwarded-For hop is the client address', async () => {
    const victim = await newUser();
    const client = address();
    for (let i = 0; i < MAX; i++) expect((await login(stack, victim.username, 'wrong-password', `${client}, 10.1.2.3`)).status).toBe(401);
    // The same client seen directly, or through another trusted hop, is the same address.
    expect((await login(stack, victim.username, victim.password, client)).status).toBe(429);
    expect((await login(stack, victim.username, victim.password, `${client}, 10.9.9.9, 10.0.0.1`)).status).toBe(429);
    // A hop the client wrote before the untrusted one does not matter; the untrusted one does.
    expect((await login(stack, victim.username, victim.password, `${client}, ${address()}`)).status).toBe(200);
  });

  it('When a success happens from one address, then it clears only that address\'s count for the username', async () => {
    const victim = await newUser();
    const attacker = address();
    const owner = address();
    for (let i = 0; i < MAX - 1; i++) {
      expect((await login(stack, victim.username, 'wrong-password', attacker)).status).toBe(401);
      expect((await login(stack, victim.username, 'wrong-password', owner)).status).toBe(401);
    }
    expect((await login(stack, victim.username, victim.password, owner)).status).toBe(200);
    // The owner's count starts again from zero...
    for (let i = 0; i < MAX - 1; i++) expect((await login(stack, victim.username, 'wrong-password', owner)).status).toBe(401);
    // ...the attacker's does not: one more failure reaches the limit.
    expect((await login(stack, victim.username, 'wrong-password', attacker)).status).toBe(401);
    expect((await login(stack, victim.username, victim.password, attacker)).status).toBe(429);
  });

  it('When one address fails LOGIN_MAX_FAILURES_PER_ADDRESS times over many usernames, then it is refused for every username, and other addresses are not', async () => {
    const spray = address();
    const users = await Promise.all(Array.from({ length: PER_ADDRESS }, () => newUser()));
    for (const u of users) expect((await login(stack, u.username, 'wrong-password', spray)).status).toBe(401);
    const fresh = await newUser();
    expect((await login(stack, fresh.username, fresh.password, spray)).status).toBe(429);
    expect((await login(stack, fresh.username, fresh.password, address())).status).toBe(200);
  });

  it('When no proxy is trusted, then X-Forwarded-For is ignored: rotating it does not escape the count', async () => {
    const o = await unproxied.createOrg();
    const rs: ApiResponse[] = [];
    for (let i = 0; i < MAX + 3; i++) rs.push(await login(unproxied, o.member.username, 'wrong-password', address()));
    expect(tally(rs)).toEqual({ 401: MAX, 429: 3 });
    expect((await login(unproxied, o.member.username, o.member.password, address())).status).toBe(429);
  });

  it('When sign-in counters are stored, then their Redis key names carry no username or address', async () => {
    const victim = await newUser();
    const from = address();
    await login(stack, victim.username, 'wrong-password', from);
    const redis = new Redis(stack.config.REDIS_URL, { maxRetriesPerRequest: 3 });
    try {
      const names: string[] = [];
      let cursor = '0';
      do {
        const [next, batch] = await redis.scan(cursor, 'MATCH', `${stack.config.REDIS_PREFIX}:*`, 'COUNT', 500);
        names.push(...batch);
        cursor = next;
      } while (cursor !== '0');
      const counters = names.filter((k) => k.includes(':signin:'));
      expect(counters.length).toBeGreaterThan(0);
      for (const k of names) {
        expect(k).not.toContain(victim.username);
        expect(k).not.toContain(org.admin.username);
        expect(k).not.toMatch(/203\.0\.113\.|127\.0\.0\.1|::1/);
      }
    } finally {
      redis.disconnect();
    }
  });
});

describe('/admin/queues Basic sign-in', () => {
  it('When the pair is wrong, then 401 like /login; when the password is right but the user is no platform administrator, then 403', async () => {
    const member = await newUser();
    const from = address();
    const wrong = await board(member.username, 'wrong-password', from);
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ detail: 'Incorrect username or password' });
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
    const unknown = await board('nobody-at-all', 'wrong-password', from);
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual(wrong.body);
    const notAdmin = await board(member.username, member.password, from);
    expect(notAdmin.status).toBe(403);
    expect(notAdmin.body).toEqual({ detail: 'Only platform administrators may do this' });
  });

  it('When wrong Basic guesses arrive in parallel, then exactly LOGIN_MAX_FAILURES get 401, and /login from that address is refused too', async () => {
    const ops = await newUser('platform_admin');
    const from = address();
    const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => board(ops.username, `guess-${i}`, from)));
    expect(tally(rs)).toEqual({ 401: MAX, 429: 20 - MAX });
    expect((await login(stack, ops.username, ops.password, from)).status).toBe(429);
    expect((await board(ops.username, ops.password, from)).status).toBe(429);
    expect((await board(ops.username, ops.password, address())).status).toBe(200);
  });

  it('When /login failures have limited an address, then the board answers 429 even to a right pair, and never 403 to a non-administrator', async () => {
    const member = await newUser();
    const from = address();
    for (let i = 0; i < MAX; i++) expect((await login(stack, member.username, 'wrong-password', from)).status).toBe(401);
    const limited = await board(member.username, member.password, from);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('When a remembered platform administrator is disabled or changes password, then the next board request is refused at once', async () => {
    const ops = await newUser('platform_admin');
    const from = address();
    expect((await board(ops.username, ops.password, from)).status).toBe(200);
    expect((await board(ops.username, ops.password, from)).status).toBe(200);
    await setUserDisabled(stack.db, { username: ops.username }, true);
    expect((await board(ops.username, ops.password, from)).status).toBe(401);
    await setUserDisabled(stack.db, { username: ops.username }, false);
    expect((await board(ops.username, ops.password, from)).status).toBe(200);
    const changed = `pw-${randomBytes(8).toString('hex')}`;
    await stack.db.query(sql.unsafe`UPDATE users SET password_hash = ${await hashPassword(changed)} WHERE username = ${ops.username}`);
    expect((await board(ops.username, ops.password, from)).status).toBe(401);
    expect((await board(ops.username, changed, from)).status).toBe(200);
  });
});
