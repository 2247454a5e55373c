import type { KeyRing } from '../../lib/crypto.ts';

/**
 * The one key a verification's data is sealed and opened with: the key its query was sealed with,
 * so a row's query and record share its key_id even after the active key has rotated.
 */
export function keyRing(ring: KeyRing, keyId: string | null): KeyRing {
  const entry = ring.find((k) => k.id === keyId);
  if (!entry) throw new Error(`encryption key ${String(keyId)} is not configured`);
  return [entry];
}
