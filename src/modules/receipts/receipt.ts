import { createHash, randomBytes } from 'node:crypto';
import type { CommonQueryMethods } from 'slonik';
import type { AppContext } from '../../context.ts';
import { getOrganisation, organisationSettings } from '../organisations/index.ts';
import { listReasons, type ReasonsDeps } from '../reasons/index.ts';
import { receiptFactsOf, type NoReceipt, type ReceiptFacts } from '../verification/index.ts';
import * as repo from './receipts.repository.ts';
import { SCHEMA_VERSION, type ConsentReceipt } from './receipts.schemas.ts';

/** A receipt's token: 128 random bits, base64url (22 characters), in its URL only; the table keeps its SHA-256. */
export const RECEIPT_TOKEN_RE = /^[A-Za-z0-9_-]{22}$/;
export const receiptTokenHash = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

export const NDPC = { name: 'Nigeria Data Protection Commission (NDPC)', url: 'https://ndpc.gov.ng' } as const;

/**
 * Gives the person a receipt for the verification just recorded under `referenceId` on a link's page,
 * and answers its path (`/r/<token>`). `purpose` is the link's purpose as the person read it.
 */
export async function issueReceipt(db: CommonQueryMethods, r: { referenceId: string; purpose: string; at: Date }): Promise<string> {
  const token = randomBytes(16).toString('base64url');
  await repo.insertReceipt(db, { tokenHash: receiptTokenHash(token), referenceId: r.referenceId, purpose: r.purpose, at: r.at });
  return `/r/${token}`;
}

export type ReceiptDeps = ReasonsDeps & Pick<AppContext, 'db' | 'clock'>;

/**
 * The consent receipt of an organisation's verification, as long as it is kept; else why it has none
 * (another organisation's, no consent recorded with it, past its retention or erased).
 */
export async function receiptOf(deps: ReceiptDeps, orgId: number, referenceId: string): Promise<ConsentReceipt | NoReceipt> {
  const facts = await receiptFactsOf(deps, orgId, referenceId);
  if (typeof facts === 'string') return facts;
  const org = await getOrganisation(deps.db, orgId);
  if (!org || org.deleted_at) return 'unknown';
  // The organisation's support contact as it stands now (null when it has set none).
  const { support_contact: supportContact } = await organisationSettings(deps.db, orgId);
  const label = (await listReasons(deps)).find((x) => x.key === facts.reason)?.label ?? facts.reason;
  const purpose = await repo.purposeOf(deps.db, referenceId);
  return build(facts, { org: org.name, supportContact, reasonLabel: label, purpose, processor: { name: deps.config.INVOICE_SELLER_NAME, url: deps.config.publicBaseUrl } });
}

const IDENTIFIER = { nin: 'NIN', vnin: 'vNIN', phone: 'phone number', demography: 'name, date of birth and gender', match: 'vNIN and details to match', face: 'NIN or vNIN' } as const;

/** The liveness check's outcome as one word, whether the comparison states it as a word or as an object with a `status`. */
function livenessOf(v: unknown): string | null {
  if (typeof v === 'string') return v;
  const status = (v as { status?: unknown } | null)?.status;
  return typeof status === 'string' ? status : null;
}

const ASK = (org: string, contact: string | null) => (contact ? `${org} (${contact})` : org);

function build(f: ReceiptFacts, o: { org: string; supportContact: string | null; reasonLabel: string; purpose: string | null; processor: { name: string; url: string } }): ConsentReceipt {
  const keptUntil = f.expiresAt.toISOString();
  const face = f.face;
  const withFace = f.mode === 'face';
  const ask = ASK(o.org, o.supportContact);
  // A link's page takes only a vNIN; an API call may have looked up another identifier.
  const byVnin = f.mode === 'vnin' || f.consent.givenByPerson;
  const pii: ConsentReceipt['pii_information'] = [
    {
      pii_type: byVnin ? 'Your virtual NIN (vNIN)' : `The identifier ${o.org} gave (${IDENTIFIER[f.mode]})`,
      use: 'To ask the National Identity Management Commission (NIMC) for your record',
      kept: byVnin ? 'Not in plain: only a one-way hash of it (to refuse the same vNIN twice), sealed with the verification' : 'Sealed (encrypted) with the verification',
      kept_until: keptUntil,
    },
    {
      pii_type: 'Your NIMC record (names, date of birth, gender, phone number, photo)',
      use: `Sent to ${o.org}, which asked for it; never shown on this receipt`,
      kept: f.status === 'found' ? 'Sealed (encrypted) with the verification' : 'Not kept: no record was received',
      kept_until: f.status === 'found' ? keptUntil : null,
    },
  ];
  if (withFace) {
    pii.push(
      { pii_type: 'Your selfie', use: 'Compared with the photo NIMC holds', kept: 'Not kept: used for the comparison only', kept_until: null },
      { pii_type: 'The comparison result (match, confidence)', use: `Sent to ${o.org}`, kept: 'Sealed (encrypted) with the verification', kept_until: keptUntil },
    );
  }
  if (f.consent.givenByPerson) {
    pii.push({ pii_type: 'Your consent (its time, the network address and browser it came from)', use: `To prove your consent to ${o.org}`, kept: 'With the verification', kept_until: keptUntil });
  }
  return {
    schema_version: SCHEMA_VERSION,
    record_id: f.referenceId,
    receipt_id: `RCP-${f.referenceId}`,
    pii_principal_id: null,
    language: 'en',
    jurisdiction: 'NG',
    sandbox: f.fixture,
    party_identification: [
      { party_id: 'controller', party_role: 'PII controller', party_name: o.org, party_url: null },
      { party_id: 'processor', party_role: 'PII processor', party_name: o.processor.name, party_url: o.processor.url },
      { party_id: 'authority', party_role: 'Data protection authority', party_name: NDPC.name, party_url: NDPC.url },
    ],
    pii_controllers: ['controller'],
    controller: { party_name: o.org, support_contact: o.supportContact },
    purpose: { purpose: o.reasonLabel, purpose_type: 'Identity verification', reason: f.reason, description: o.purpose },
    lawful_basis: { basis: 'consent', law: 'Nigeria Data Protection Act 2023, sections 25(1)(a) and 26' },
    collection_method: f.consent.channel,
    pii_information: pii,
    retention_period: { seconds: Math.round((f.expiresAt.getTime() - f.createdAt.getTime()) / 1000), kept_until: keptUntil },
    results: {
      verification: f.status === 'expired' ? 'failed' : f.status,
      face: face ? { status: face.status, match: face.match, confidence: face.confidence, threshold: face.threshold } : null,
      liveness: face ? livenessOf(face.liveness) : null,
      ...f.verdict,
    },
    event: [{ event_time: f.consent.obtainedAt, event_type: 'explicit', event_state: 'consent given', given_by: f.consent.givenByPerson ? 'person' : 'organisation' }],
    privacy_notice: { version: f.consent.noticeVersion, text: f.consent.text },
    recipient_third_parties: [],
    privacy_rights: [
      { right: 'access', how: `Ask ${ask} for a copy of what it holds about you, quoting ${f.referenceId}.` },
      { right: 'erasure', how: `Ask ${ask} to erase it, quoting ${f.referenceId}. Everything is erased by itself on ${keptUntil.slice(0, 10)}.` },
      { right: 'complaint', how: `If ${o.org} does not answer, complain to the ${NDPC.name}: ${NDPC.url}.` },
    ],
    withdrawal_method: `Tell ${ask} that you withdraw your consent, quoting ${f.referenceId}: it must stop using the result and erase what it holds. The check already made cannot be undone.`,
  };
}
