import { sql } from 'slonik';
import { describe, expect, it } from 'vitest';
import { failing, is, not, or, rule, ruleSql, UNSURE } from '../../src/lib/rule.ts';

// The one way a compiled rule could be wider than the code: a field only the code knows (the
// caller's address) read as false under a NOT would read as true. The compiler refuses to build it.
describe('a rule compiled to SQL is never wider than the code', () => {
  const binding = { known: sql.fragment`true`, address_allowed: UNSURE };

  it('an unsure field where false narrows compiles (to false); under a NOT, compiling it throws', () => {
    expect(() => ruleSql(rule({ ok: or(is('known'), is('address_allowed')) }), binding)).not.toThrow();
    expect(() => ruleSql(rule({ ok: not(is('address_allowed')) }), binding)).toThrow(/widen/);
    expect(() => ruleSql(rule({ ok: not(not(is('address_allowed'))) }), binding)).not.toThrow();
    expect(() => ruleSql(rule({ ok: is('unbound') }), binding)).toThrow(/no binding/);
  });

  it('the code answers the first check that fails, in the order the rule names them', () => {
    const r = rule({ first: is('a'), second: is('b') });
    expect(failing(r, { a: true, b: true })).toBeNull();
    expect(failing(r, { a: false, b: false })).toBe('first');
    expect(failing(r, { a: true, b: null })).toBe('second');
  });
});
