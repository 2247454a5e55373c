import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { open, openJson, seal, sealJson } from '../../src/lib/crypto.ts';

const k1 = { id: 'k1', key: randomBytes(32) };
const k2 = { id: 'k2', key: randomBytes(32) };

describe('encryption at rest', () => {
  it('When a record is sealed, then it opens with its associated data only', () => {
    const s = sealJson([k1], { fname: 'Ada' }, 'REF-AAAAAAAAAAAA');
    expect(s.keyId).toBe('k1');
    expect(s.data.includes(Buffer.from('Ada'))).toBe(false);
    expect(openJson([k1], s, 'REF-AAAAAAAAAAAA')).toEqual({ fname: 'Ada' });
    expect(() => open([k1], s, 'REF-BBBBBBBBBBBB')).toThrow();
  });

  it('When the key rotates, then old ciphertexts still open and new ones use the new key', () => {
    const old = seal([k1], 'secret', 'a');
    const ring = [k2, k1];
    expect(open(ring, old, 'a').toString()).toBe('secret');
    expect(seal(ring, 'x', 'a').keyId).toBe('k2');
    expect(() => open([k2], old, 'a')).toThrow(/k1/);
  });

  it('When a ciphertext is altered, then it does not open', () => {
    const s = seal([k1], 'secret', 'a');
    s.data[s.data.length - 1]! ^= 1;
    expect(() => open([k1], s, 'a')).toThrow();
  });
});
