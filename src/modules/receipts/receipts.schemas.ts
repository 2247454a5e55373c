import { z } from 'zod';
import { verdictSchema } from '../verification/index.ts';

// The consent receipt (docs/receipts.md): the fields of ISO/IEC TS 27560:2023 "consent record
// information structure", named as the Data Privacy Vocabulary's JSON profile of it names them
// (schema_version, record_id, receipt_id, pii_principal_id, privacy_notice, purpose, lawful_basis,
// pii_information, pii_controllers, retention_period, jurisdiction, withdrawal_method,
// privacy_rights, party_identification, event). One schema for the person's /r/<token>.json and the
// organisation's GET /verifications/{reference_id}/receipt, which answer the same document.

/** Names the receipt's structure: the standard, and this service's version of it. */
export const SCHEMA_VERSION = 'ISO/IEC TS 27560:2023 consent receipt, idverify profile 1';

const party = z.object({
  party_id: z.enum(['controller', 'processor', 'authority']),
  party_role: z.string().meta({ description: 'As 27560 names it: `PII controller`, `PII processor`, `Data protection authority`' }),
  party_name: z.string(),
  party_url: z.string().nullable(),
});

const piiItem = z.object({
  pii_type: z.string().meta({ description: 'What kind of personal data, never its value', example: 'virtual NIN (vNIN)' }),
  use: z.string().meta({ description: 'What it was used for' }),
  kept: z.string().meta({ description: 'Whether and how it is kept' }),
  kept_until: z.string().nullable().meta({ description: 'When it is erased (ISO 8601); null: not kept at all' }),
});

const right = z.object({
  right: z.enum(['access', 'erasure', 'complaint']),
  how: z.string(),
});

export const consentReceipt = z
  .object({
    schema_version: z.string().meta({ description: 'The structure this receipt follows', example: SCHEMA_VERSION }),
    record_id: z.string().meta({ description: 'The consent record: the verification it was given for (its `reference_id`)', example: 'REF-7K2M9Q4XD1AB' }),
    receipt_id: z.string().meta({ description: 'This receipt: `RCP-` and the record id (the same receipt for the person and the organisation)', example: 'RCP-REF-7K2M9Q4XD1AB' }),
    pii_principal_id: z.null().meta({ description: 'Always null: the receipt names no one; whoever holds it is the person who agreed' }),
    language: z.string().meta({ example: 'en' }),
    jurisdiction: z.literal('NG'),
    sandbox: z.boolean().meta({ description: 'A sandbox fixture (invented person): no real identity was looked up' }),
    party_identification: z.array(party).meta({ description: 'The organisation (PII controller), this service (PII processor) and the NDPC (authority)' }),
    pii_controllers: z.array(z.literal('controller')),
    controller: z.object({
      party_name: z.string(),
      support_contact: z.string().nullable().meta({ description: "The organisation's support contact (an e-mail, phone or URL in a sentence); null when it has set none" }),
    }),
    purpose: z.object({
      purpose: z.string().meta({ description: 'The lawful reason given for the verification, as listed by NIMC (its label)', example: 'Account opening (corporate)' }),
      purpose_type: z.literal('Identity verification'),
      reason: z.string().meta({ description: "The reason's key", example: 'corporate' }),
      description: z.string().nullable().meta({ description: "The verification link's purpose as the person read it; null when the verification was not made on a link" }),
    }),
    lawful_basis: z.object({
      basis: z.literal('consent'),
      law: z.string(),
    }),
    collection_method: z.string().meta({ description: "How the consent was taken: the consent's `channel` (`web` for a link's page)" }),
    pii_information: z.array(piiItem),
    retention_period: z.object({
      seconds: z.number().int().meta({ description: 'How long the verification (and this receipt) is kept, from when it was made' }),
      kept_until: z.string().meta({ description: 'When the verification and this receipt are erased (ISO 8601)' }),
    }),
    results: z.object({
      verification: z.enum(['pending', 'found', 'not_found', 'failed']).meta({ description: '`found`: NIMC holds a record for the vNIN; `pending`: not decided yet' }),
      face: z
        .object({
          status: z.enum(['compared', 'no_reference_photo']),
          match: z.boolean().nullable(),
          confidence: z.number().nullable(),
          threshold: z.number(),
        })
        .nullable()
        .meta({ description: 'The comparison of the selfie with the NIMC photo; null when none was made' }),
      liveness: z.string().nullable().meta({ description: 'The liveness check; null when no face was compared' }),
      // The very verdict the organisation read in its answer and events (verdict.ts).
      ...verdictSchema,
    }),
    event: z
      .array(
        z.object({
          event_time: z.string().meta({ description: 'When the person agreed (ISO 8601)' }),
          event_type: z.literal('explicit'),
          event_state: z.literal('consent given'),
          given_by: z.enum(['person', 'organisation']).meta({ description: "`person`: on the link's page, in their own words; `organisation`: stated by the organisation's API call" }),
        }),
      )
      .meta({ description: 'The consent events (27560 `event`): one, the consent given' }),
    privacy_notice: z.object({
      version: z.string(),
      text: z.string().nullable().meta({ description: 'The very text the person agreed to; null when the organisation stated the consent over the API (it names only the version)' }),
    }),
    recipient_third_parties: z.array(z.string()).meta({ description: 'None: the record goes to the controller only' }),
    privacy_rights: z.array(right),
    withdrawal_method: z.string(),
  })
  .meta({ id: 'ConsentReceipt', description: 'A consent receipt (ISO/IEC TS 27560): no NIN, vNIN, name or photo' });
export type ConsentReceipt = z.infer<typeof consentReceipt>;

/** The person's e-mail form: an address, used once for the sending and never stored. */
export const emailForm = z.object({
  email: z.string().trim().pipe(z.email('Enter an e-mail address, for example you@example.com').max(254, 'An e-mail address is at most 254 characters')),
});

/** The path's reference, as every verification route spells it. */
export const referenceParam = z.object({
  reference_id: z.string().regex(/^REF-[A-Z0-9]{12}$/, 'reference_id must be REF- followed by 12 characters A-Z or 0-9').meta({ example: 'REF-7K2M9Q4XD1AB' }),
});
