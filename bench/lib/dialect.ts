import type { IdentityAuthorityDialect } from '../../src/adapters/identity-authority/index.ts';

/**
 * Which adapter the benchmark and chaos stacks run the service with: IDENTITY_DIALECT of the
 * environment that starts them (sandbox, prembly or dojah; default sandbox). Their identity
 * simulator speaks all three, so the same scenario can run through each adapter over HTTP.
 */
export const DIALECTS: readonly IdentityAuthorityDialect[] = ['sandbox', 'prembly', 'dojah'];

export function identityDialectFromEnv(env: NodeJS.ProcessEnv = process.env): IdentityAuthorityDialect {
  const value = env.IDENTITY_DIALECT ?? 'sandbox';
  const dialect = DIALECTS.find((d) => d === value);
  if (!dialect) throw new Error(`IDENTITY_DIALECT must be one of ${DIALECTS.join(', ')}`);
  return dialect;
}

/** The app id the stacks' simulators check on Prembly and Dojah calls, and the service sends. */
export const BENCH_IDENTITY_APP_ID = 'bench-identity-app';
