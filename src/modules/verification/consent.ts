import { z } from 'zod';
import type { Clock } from '../../lib/clock.ts';
import { instant, instantOf } from '../../lib/instant.ts';

export const CONSENT_CHANNELS = ['web', 'mobile', 'in_person', 'ussd', 'other'] as const;
export const CONSENT_MAX_AGE_DAYS = 90;
export const CONSENT_REQUIRED = 'consent is required by your organisation';

/**
 * What is stored with a verification: when, how and under which notice the person agreed, as the caller
 * states it (not personal data). A verification link records the person's own consent, given on its
 * page: `given_by: "person"`, the address and browser it came from and the very text agreed to
 * (subject erasure removes the address and the browser).
 */
export type Consent = { obtained_at: string; channel: (typeof CONSENT_CHANNELS)[number]; notice_version: string } & Partial<PersonsOwnConsent>;
export type PersonsOwnConsent = { given_by: 'person'; address: string; user_agent: string; text: string };

// The caller's clock and ours are never exactly together.
const CLOCK_SLACK_MS = 60_000;

/**
 * The optional `consent` object of every verification POST. Wrong types and missing fields are 422
 * like every other field; a well-typed value that breaks a rule is 400 naming the field
 * (`consent.obtained_at: ...`). Built per app: "not in the future" and "at most 90 days old" follow
 * the injectable clock.
 */
export function consentSchema(clock: Clock) {
  return z
    .object({
      obtained_at: instant
        .refine((v) => !(instantOf(v)!.getTime() > clock.now().getTime() + CLOCK_SLACK_MS), 'must not be in the future')
        .refine((v) => !(instantOf(v)!.getTime() < clock.now().getTime() - CONSENT_MAX_AGE_DAYS * 86_400_000), `must be at most ${CONSENT_MAX_AGE_DAYS} days old`)
        .transform((v) => instantOf(v)!.toISOString())
        .meta({ description: `When the person agreed: not in the future, at most ${CONSENT_MAX_AGE_DAYS} days old`, example: '2026-11-20T09:30:00Z' }),
      channel: z.enum(CONSENT_CHANNELS, `must be one of ${CONSENT_CHANNELS.join(', ')}`).meta({ description: 'How the person agreed' }),
      notice_version: z
        .string()
        .refine((v) => v.trim().length >= 1, 'must not be empty')
        .refine((v) => v.length <= 64, 'must be at most 64 characters')
        .meta({ description: 'Which privacy notice the person was shown (1-64 characters)', example: 'privacy-2026-03' }),
    })
    .meta({ id: 'Consent', description: 'How the person agreed to this verification; stored with it (it is not personal data) and shown in history and requery' });
}
