import type { Request } from 'express';
import type { RedisClient } from '../../lib/redis.ts';
import type { Config } from '../../config.ts';
import { AppError } from '../../lib/errors.ts';
import { keyNamer } from '../../lib/key-names.ts';

/** What the guard needs: AppContext satisfies it. */
export type SignInDeps = {
  redis: RedisClient;
  config: Pick<Config, 'REDIS_PREFIX' | 'JWT_SECRET' | 'LOGIN_MAX_FAILURES' | 'LOGIN_MAX_FAILURES_PER_ADDRESS' | 'LOGIN_LOCK_SECONDS'>;
};

// Two counters: consecutive failures of one username from one address (KEYS[1]), and failures from
// one address for any username (KEYS[2]). Checking and taking a point is one script, so parallel
// guesses cannot all pass the check before any of them is counted.
const TAKE = `
local limits = { tonumber(ARGV[1]), tonumber(ARGV[2]) }
for i = 1, 2 do
  if tonumber(redis.call('GET', KEYS[i]) or '0') >= limits[i] then
    return { 0, redis.call('PTTL', KEYS[i]) }
  end
end
if ARGV[4] == '1' then
  for i = 1, 2 do
    redis.call('INCR', KEYS[i])
    redis.call('PEXPIRE', KEYS[i], ARGV[3])
  end
end
return { 1, 0 }`;

// A success clears its own username-and-address count and gives back the address point it took;
// another address's count for the same username is untouched.
const GIVE_BACK = `
redis.call('DEL', KEYS[1])
if tonumber(redis.call('GET', KEYS[2]) or '0') > 0 then redis.call('DECR', KEYS[2]) end
return 1`;

// A check that failed for another reason than the password (a database fault) proved nothing.
const REFUND = `
for i = 1, 2 do
  if tonumber(redis.call('GET', KEYS[i]) or '0') > 0 then redis.call('DECR', KEYS[i]) end
end
return 1`;

const RECORD = `
for i = 1, 2 do
  redis.call('INCR', KEYS[i])
  redis.call('PEXPIRE', KEYS[i], ARGV[1])
end
return 1`;

const namers = new Map<string, (v: string) => string>();

function keys(deps: SignInDeps, username: string, address: string): [string, string] {
  const c = deps.config;
  let name = namers.get(c.JWT_SECRET);
  if (!name) {
    name = keyNamer(c.JWT_SECRET);
    namers.set(c.JWT_SECRET, name);
  }
  // Normalised as usernames are, so full-width or other compatibility forms of one name share its count.
  const user = username.normalize('NFKC').trim().toLowerCase();
  // Both keys carry the address's hash as their hash tag: one script touches both, so on a Redis
  // Cluster they must share a slot, while different addresses still spread over the masters.
  const addr = name(address);
  return [`${c.REDIS_PREFIX}:signin:{${addr}}:pair:${name(`${user}\n${address}`)}`, `${c.REDIS_PREFIX}:signin:{${addr}}:addr`];
}

/** The caller's address: the socket's, or the first untrusted X-Forwarded-For hop when TRUST_PROXY names the proxies. */
export function clientAddress(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

function limited(pttl: number): AppError {
  const seconds = Math.max(1, Math.ceil(pttl / 1000));
  return new AppError('rate_limited', 'Too many requests, retry later', { headers: { 'Retry-After': String(seconds) } });
}

async function take(deps: SignInDeps, username: string, address: string, consume: boolean): Promise<void> {
  const c = deps.config;
  const [ok, pttl] = (await deps.redis.eval(TAKE, 2, ...keys(deps, username, address), c.LOGIN_MAX_FAILURES, c.LOGIN_MAX_FAILURES_PER_ADDRESS, c.LOGIN_LOCK_SECONDS * 1000, consume ? '1' : '0')) as [number, number];
  if (ok !== 1) throw limited(pttl);
}

/**
 * Takes one failure point for this username from this address before the password is checked;
 * throws 429 (with Retry-After) when either count is at its limit. Give the point back with
 * signInSucceeded once the password proves right; a wrong one keeps it.
 */
export function consumeSignInAttempt(deps: SignInDeps, username: string, address: string): Promise<void> {
  return take(deps, username, address, true);
}

/** Throws 429 when this username from this address may not sign in now; takes nothing. */
export function assertSignInAllowed(deps: SignInDeps, username: string, address: string): Promise<void> {
  return take(deps, username, address, false);
}

export async function signInSucceeded(deps: SignInDeps, username: string, address: string): Promise<void> {
  await deps.redis.eval(GIVE_BACK, 2, ...keys(deps, username, address));
}

/** Counts a failure that was not preceded by consumeSignInAttempt (e.g. a wrong current password found another way). */
export async function recordFailedSignIn(deps: SignInDeps, username: string, address: string): Promise<void> {
  await deps.redis.eval(RECORD, 2, ...keys(deps, username, address), deps.config.LOGIN_LOCK_SECONDS * 1000);
}

/**
 * The whole guarded check: takes a point, runs `attempt` (the password check), gives the point back
 * when it returns something. A fault (database down) gives it back too: it proved nothing.
 */
export async function guardedSignIn<T>(deps: SignInDeps, username: string, address: string, attempt: () => Promise<T | null>): Promise<T | null> {
  await consumeSignInAttempt(deps, username, address);
  let result: T | null;
  try {
    result = await attempt();
  } catch (err) {
    await deps.redis.eval(REFUND, 2, ...keys(deps, username, address)).catch(() => undefined);
    throw err;
  }
  if (result) await signInSucceeded(deps, username, address);
  return result;
}
