import { LRUCache } from 'lru-cache';

/**
 * The payloads of tokens whose signature, algorithm, key id and issuer jsonwebtoken has accepted in
 * this process, by the token's exact text. The same bytes under the same keys always verify the
 * same way (the keys are read once, at start), so a remembered verdict is exact; it spares the HMAC,
 * the base64 and JSON decoding of a token an integrator sends with every call (measured: a sixth of
 * the API's CPU on a requery). Only the signature's verdict is remembered: every request still
 * checks the claims (expiry on the app's clock), reads its principal and asks the deny-list. A
 * refused token is never remembered. Bounded in count, each entry kept at most a token's lifetime.
 */
export type TokenMemo = { get(token: string | null): object | undefined; remember(token: string | null, payload: unknown): void };

export function tokenMemo(o: { max: number; ttlSeconds: number }): TokenMemo {
  const cache = new LRUCache<string, object>({ max: o.max, ttl: o.ttlSeconds * 1000 });
  return {
    get: (token) => (token ? cache.get(token) : undefined),
    remember: (token, payload) => {
      if (token && payload !== null && typeof payload === 'object') cache.set(token, Object.freeze(payload));
    },
  };
}
