import { createCipheriv, createDecipheriv, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

export type KeyRing = { id: string; key: Buffer }[];

export type Sealed = { keyId: string; data: Buffer };

const IV_BYTES = 12;
const TAG_BYTES = 16;

// A raw key handed to createCipheriv is turned into a key object on every call (measurable on the
// requery path); each configured key is turned once. Keyed by the Buffer, so a rotated-out key goes with its ring.
const keyObjects = new WeakMap<Buffer, KeyObject>();
function keyObject(key: Buffer): KeyObject {
  let k = keyObjects.get(key);
  if (!k) keyObjects.set(key, (k = createSecretKey(key)));
  return k;
}

/**
 * AES-256-GCM with the first key of the ring. The associated data binds a ciphertext to its row
 * (a reference id), so a ciphertext copied onto another row does not decrypt.
 */
export function seal(ring: KeyRing, plaintext: Buffer | string, aad: string): Sealed {
  const active = ring[0];
  if (!active) throw new Error('no encryption key configured');
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyObject(active.key), iv);
  cipher.setAAD(Buffer.from(aad));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { keyId: active.id, data: Buffer.concat([iv, cipher.getAuthTag(), body]) };
}

export function open(ring: KeyRing, sealed: Sealed, aad: string): Buffer {
  const entry = ring.find((k) => k.id === sealed.keyId);
  if (!entry) throw new Error(`encryption key ${sealed.keyId} is not configured`);
  const iv = sealed.data.subarray(0, IV_BYTES);
  const tag = sealed.data.subarray(IV_BYTES, IV_BYTES + TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', keyObject(entry.key), iv);
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(sealed.data.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
}

export function sealJson(ring: KeyRing, value: unknown, aad: string): Sealed {
  return seal(ring, JSON.stringify(value), aad);
}

export function openJson<T = unknown>(ring: KeyRing, sealed: Sealed, aad: string): T {
  return JSON.parse(open(ring, sealed, aad).toString('utf8')) as T;
}

/** The same plaintext sealed again with the ring's first key (key rotation); the associated data stays. */
export function reseal(ring: KeyRing, sealed: Sealed, aad: string): Sealed {
  return seal(ring, open(ring, sealed, aad), aad);
}

/** The key ids of the ring other than the active one: what crypto:reencrypt moves rows away from. */
export function retiredKeyIds(ring: KeyRing): string[] {
  return ring.slice(1).map((k) => k.id);
}

/** Rows still sealed with a key other than the active one, per table and key id (the /metrics gauge). */
export type SealedCount = { table: string; key_id: string; rows: number };
