import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { AppError } from '../../lib/errors.ts';
import { LOW_BALANCE_MAX } from './low-balance.ts';

/**
 * An organisation's own policies, set by its administrators (PATCH /me/organisation) or by an
 * operator (admin CLI org:settings). Each is one column of `organisations`; adding a setting is a
 * column, a field here and a line in the patch schema.
 */
export const organisationSettingsRow = z.object({
  require_consent: z.boolean(),
  low_balance_units: z.number().int().nullable().meta({ description: 'The low-balance alert line in units; null: no alerts' }),
  require_mfa: z.boolean(),
  address: z.string().nullable().meta({ description: "The organisation's postal address, printed on its invoices; null: not on file" }),
  tin: z.string().nullable().meta({ description: 'Tax identification number, printed on its invoices; null: not on file' }),
  face_match_threshold: z.number().int().meta({ description: 'A face match is `confidence >= face_match_threshold` (0-100 scale; default 75)' }),
  alert_emails: z.array(z.string()).meta({ description: "Who gets the organisation's low-balance alerts; empty: its administrators (else its billing address)" }),
  support_contact: z.string().nullable().meta({ description: 'Shown to a person on every verification link page that cannot go on; null: none' }),
  require_liveness: z.boolean().meta({ description: 'A face match must come with a liveness check: one with a plain `selfie` is refused (422 `liveness_required`)' }),
});
export type OrganisationSettings = z.infer<typeof organisationSettingsRow>;

export const ALERT_EMAILS_MAX = 10;
export const SUPPORT_CONTACT_MAX = 200;

// What a person can use to reach the organisation: an e-mail address, a phone number (7 to 15 digits,
// spaces, hyphens, dots, brackets, a leading +), or a web address (https://... or www....).
const EMAIL_IN_TEXT = /[^\s@<>()]+@[^\s@<>()]+\.[A-Za-z]{2,}/;
const PHONE_IN_TEXT = /(?:^|[^\d])\+?\d(?:[\d\s().-]{5,18})\d(?:[^\d]|$)/;
const URL_IN_TEXT = /\b(?:https?:\/\/|www\.)[^\s]+\.[^\s]{2,}/i;
const digitsIn = (s: string) => (s.match(/\d/g) ?? []).length;

/** Whether the sentence names a way to reach someone (an e-mail, a phone number of 7 to 15 digits, a web address). */
export function namesAContact(text: string): boolean {
  if (EMAIL_IN_TEXT.test(text) || URL_IN_TEXT.test(text)) return true;
  const phone = PHONE_IN_TEXT.exec(text);
  return phone !== null && digitsIn(phone[0]) >= 7 && digitsIn(phone[0]) <= 15;
}

export const SUPPORT_CONTACT_RULE = `support_contact must be one sentence of at most ${SUPPORT_CONTACT_MAX} characters naming an e-mail address, a phone number or a web address (e.g. "Call 0803 123 4567 or write to help@example.com")`;

export const settingsPatch = z
  .object({
    require_consent: z.boolean().optional().meta({ description: 'Live verifications without a `consent` object are refused (400); fixtures are exempt' }),
    low_balance_units: z
      .number()
      .int('low_balance_units must be a whole number')
      .min(1, `low_balance_units must be from 1 to ${LOW_BALANCE_MAX}, or null to turn alerts off`)
      .max(LOW_BALANCE_MAX, `low_balance_units must be from 1 to ${LOW_BALANCE_MAX}, or null to turn alerts off`)
      .nullable()
      .optional()
      .meta({ description: 'When a debit takes the balance below this many units, the administrators get one e-mail (again only after it was back above); null turns alerts off' }),
    require_mfa: z
      .boolean()
      .optional()
      .meta({ description: 'Administrators must sign in with a second factor; until they enrol they can only enrol (403 `mfa_enrolment_required`)' }),
    address: z
      .string()
      .trim()
      .min(1, 'address must not be empty (null removes it)')
      .max(300, 'address must be at most 300 characters')
      .nullable()
      .optional()
      .meta({ description: "The organisation's postal address as its invoices should show it, on one line (commas between its parts); null removes it" }),
    tin: z
      .string()
      .trim()
      .regex(/^[0-9][0-9-]{6,18}[0-9]$/, 'tin must be 8 to 20 digits, hyphens allowed between them (e.g. 12345678-0001)')
      .nullable()
      .optional()
      .meta({ description: 'Tax identification number (TIN), shown on invoices; null removes it' }),
    face_match_threshold: z
      .number()
      .int('face_match_threshold must be a whole number')
      .min(1, 'face_match_threshold must be from 1 to 100')
      .max(100, 'face_match_threshold must be from 1 to 100')
      .optional()
      .meta({
        description:
          'Face matches (`POST /verify-nin/face`) match at `confidence >= face_match_threshold`. Default 75 (descriptor distance 0.545, between the same-person and different-person distances we measured); higher refuses more of the right people, lower accepts more of the wrong ones',
      }),
    alert_emails: z
      .array(z.string().trim().toLowerCase().pipe(z.email('alert_emails must hold e-mail addresses (e.g. accounts@example.com)').max(254, 'alert_emails: an address is at most 254 characters')))
      .max(ALERT_EMAILS_MAX, `alert_emails may hold at most ${ALERT_EMAILS_MAX} addresses`)
      // The same address twice would get every alert twice.
      .transform((list) => [...new Set(list)])
      .optional()
      .meta({ description: `Who gets the low-balance alerts (at most ${ALERT_EMAILS_MAX} addresses, each once); an empty list: the administrators, else the billing address` }),
    support_contact: z
      .string()
      // One line: the page shows it as one sentence.
      .transform((v) => v.replace(/\s+/g, ' ').trim())
      .pipe(z.string().min(1, `${SUPPORT_CONTACT_RULE}; null removes it`).max(SUPPORT_CONTACT_MAX, SUPPORT_CONTACT_RULE).refine(namesAContact, SUPPORT_CONTACT_RULE))
      .nullable()
      .optional()
      .meta({
        description: `Where a person turns when a verification link page cannot go on (expired, used up, withdrawn, the organisation cannot take verifications, a failure): one sentence of at most ${SUPPORT_CONTACT_MAX} characters with an e-mail address, a phone number (7 to 15 digits) or a web address, shown as written; null removes it`,
        example: 'Call 0803 123 4567 (9am to 5pm) or write to help@example.com',
      }),
    require_liveness: z
      .boolean()
      .optional()
      .meta({
        description:
          'Face matches must come with a liveness check (`liveness` in place of `selfie`): a face match with a plain `selfie` (API or verification link) is refused, 422 `liveness_required`, before anything is looked up or charged; and the verdict asks for liveness `passed`. Default false',
      }),
  })
  .strict()
  .refine((p) => Object.keys(p).length > 0, 'Send at least one setting to change')
  .meta({ id: 'OrganisationSettingsPatch' });
export type SettingsPatch = z.infer<typeof settingsPatch>;

export const ORGANISATION_NOT_FOUND = 'Organisation not found';

const COLUMNS = sql.fragment`require_consent, require_mfa, low_balance_units, address, tin, face_match_threshold, alert_emails, support_contact, require_liveness`;

/** Read on each live verification: one primary-key row, no join. */
export async function organisationSettings(db: CommonQueryMethods, orgId: number): Promise<OrganisationSettings> {
  const row = await db.maybeOne(sql.type(organisationSettingsRow)`SELECT ${COLUMNS} FROM organisations WHERE id = ${orgId}`);
  if (!row) throw new AppError('not_found', ORGANISATION_NOT_FOUND);
  return row;
}

/** One UPDATE of the fields sent; a retired organisation cannot change its settings. */
export async function updateOrganisationSettings(db: CommonQueryMethods, orgId: number, patch: SettingsPatch): Promise<OrganisationSettings> {
  const sets = [];
  if (patch.require_consent !== undefined) sets.push(sql.fragment`require_consent = ${patch.require_consent}`);
  if (patch.require_mfa !== undefined) sets.push(sql.fragment`require_mfa = ${patch.require_mfa}`);
  if (patch.face_match_threshold !== undefined) sets.push(sql.fragment`face_match_threshold = ${patch.face_match_threshold}`);
  // A changed line arms the alert again (a trigger on organisations): the next crossing is announced.
  if (patch.low_balance_units !== undefined) sets.push(sql.fragment`low_balance_units = ${patch.low_balance_units}`);
  if (patch.address !== undefined) sets.push(sql.fragment`address = ${patch.address}`);
  if (patch.tin !== undefined) sets.push(sql.fragment`tin = ${patch.tin}`);
  if (patch.support_contact !== undefined) sets.push(sql.fragment`support_contact = ${patch.support_contact}`);
  if (patch.require_liveness !== undefined) sets.push(sql.fragment`require_liveness = ${patch.require_liveness}`);
  if (patch.alert_emails !== undefined) sets.push(sql.fragment`alert_emails = ${sql.array(patch.alert_emails, 'text')}`);
  const row = await db.maybeOne(sql.type(organisationSettingsRow)`
    UPDATE organisations SET ${sql.join(sets, sql.fragment`, `)}
    WHERE id = ${orgId} AND deleted_at IS NULL
    RETURNING ${COLUMNS}`);
  if (!row) throw new AppError('not_found', ORGANISATION_NOT_FOUND);
  return row;
}
