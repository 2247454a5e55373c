import { UpstreamError, type UpstreamOutcome } from '../../src/adapters/identity-authority/types.ts';
import { normalisePerson, personRecordSchema, type PersonRecord } from '../../src/modules/verification/person.ts';

/** What the identity-authority tests ask of an adapter's outcome: the record, normalised as the service would. */
export function foundRecord(outcome: UpstreamOutcome): PersonRecord {
  if (outcome.kind !== 'found') throw new Error(`expected found, got ${outcome.kind}`);
  return personRecordSchema.parse(normalisePerson(outcome.raw));
}

/** The UpstreamError a call failed with; anything else (success, another error) fails the test. */
export async function upstreamError(promise: Promise<unknown>): Promise<UpstreamError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof UpstreamError)) throw new Error(`expected an UpstreamError, got ${String(err)}`);
  return err;
}
