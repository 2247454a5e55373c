import { ConnectionError } from 'slonik';
import { expect, it } from 'vitest';
import { isUnavailable } from '../../src/lib/http.ts';

// Pinpoints why postgres-outage.test.ts sees 500s: when the pool cannot (re)connect, slonik throws
// a ConnectionError whose `name` is the inherited 'Error' (the class sets none) and whose message is
// the socket's ("read ECONNRESET", "connect ECONNRESET 127.0.0.1:5432"), with the code on `cause`.

function connectionError(message: string, code: string): ConnectionError {
  return new ConnectionError(message, { cause: Object.assign(new Error(message), { code }) });
}

it('When the PostgreSQL pool cannot connect (slonik ConnectionError), then the error counts as "dependency unavailable" (503)', () => {
  expect(connectionError('read ECONNRESET', 'ECONNRESET').name).toBe('Error');
  for (const [message, code] of [
    ['read ECONNRESET', 'ECONNRESET'],
    ['connect ECONNRESET 127.0.0.1:5432', 'ECONNRESET'],
    ['connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'],
  ] as const) {
    expect(isUnavailable(connectionError(message, code)), message).toBe(true);
  }
});
