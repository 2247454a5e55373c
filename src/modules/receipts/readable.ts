import type { ConsentReceipt } from './receipts.schemas.ts';

/**
 * The receipt in the person's words, one list of sections for the page, its PDF and the e-mail, so
 * the three say the same. Built from the JSON document only: what it does not hold (no NIN, vNIN,
 * name or photo) none of them can show.
 */
export type Readable = { title: string; intro: string; sections: { heading: string; rows: [string, string][] }[] };

const lagosTime = new Intl.DateTimeFormat('en-GB', { timeZone: 'Africa/Lagos', day: 'numeric', month: 'long', year: 'numeric', hour: '2-digit', minute: '2-digit', hour12: false });
const when = (iso: string) => `${lagosTime.format(new Date(iso))} (Lagos time)`;

function outcome(r: ConsentReceipt): string {
  const v = r.results.verification;
  const record = v === 'found' ? 'NIMC found your record' : v === 'pending' ? 'Not decided yet' : v === 'not_found' ? 'NIMC did not find a record for the vNIN' : 'The check could not be made';
  return record;
}

function faceText(r: ConsentReceipt): string {
  const f = r.results.face;
  if (!f) return 'No face comparison was made';
  if (f.status === 'no_reference_photo') return 'Not compared: NIMC holds no photo to compare with';
  return `${f.match ? 'Your selfie matched' : 'Your selfie did not match'} the NIMC photo (confidence ${f.confidence} out of 100; a match needs ${f.threshold})`;
}

/** The verdict the organisation read, in the person's words: whether every check it asked for passed. */
const REASON_WORDS: Record<string, string> = {
  not_found: 'no record was found',
  refused: 'the vNIN was refused (used, expired or made for another organisation)',
  failed: 'the check could not be made',
  details_no_match: 'the details given did not match the record',
  no_reference_photo: 'NIMC holds no photo to compare with',
  face_not_compared: 'the face could not be compared',
  face_no_match: 'the selfie did not match',
  liveness_failed: 'the liveness check failed',
  liveness_not_checked: 'the liveness check was not made',
};
function verdictText(r: ConsentReceipt): string {
  const { verdict, verdict_reasons: reasons } = r.results;
  if (verdict === null) return 'Not decided yet';
  if (verdict === 'verified') return 'Verified: every check asked for passed';
  return `Not verified: ${reasons.map((x) => REASON_WORDS[x] ?? x).join('; ')}`;
}

export function readable(r: ConsentReceipt): Readable {
  const org = r.controller.party_name;
  const rows: Readable['sections'] = [
    {
      heading: 'What you agreed to',
      rows: [
        ['Agreed on', when(r.event[0]!.event_time)],
        ['Notice', r.privacy_notice.text ?? `Notice version ${r.privacy_notice.version}, as ${org} showed it to you`],
        ['Notice version', r.privacy_notice.version],
      ],
    },
    {
      heading: 'Who',
      rows: [
        ['Asked by (controller)', org],
        ['Contact', r.controller.support_contact ?? `${org} has not given a contact here: ask them where you were sent this link`],
        ['Done by (processor)', r.party_identification.find((p) => p.party_id === 'processor')!.party_name],
      ],
    },
    {
      heading: 'Why',
      rows: [
        ['Reason given', r.purpose.purpose],
        ...(r.purpose.description ? ([['Purpose', r.purpose.description]] as [string, string][]) : []),
        ['Lawful basis', `Your consent (${r.lawful_basis.law})`],
      ],
    },
    { heading: 'The result', rows: [['Verdict', verdictText(r)], ['Identity record', outcome(r)], ['Face', faceText(r)], ...(r.results.liveness && r.results.face ? ([['Liveness', r.results.liveness === 'not_checked' ? 'Not checked' : r.results.liveness]] as [string, string][]) : [])] },
    { heading: 'Your data', rows: r.pii_information.map((p) => [p.pii_type, `${p.use}. ${p.kept}${p.kept_until ? ` until ${when(p.kept_until)}` : ''}.`] as [string, string]) },
    {
      heading: 'Your rights',
      rows: [
        ['See your data', r.privacy_rights.find((x) => x.right === 'access')!.how],
        ['Erase it', r.privacy_rights.find((x) => x.right === 'erasure')!.how],
        ['Complain', r.privacy_rights.find((x) => x.right === 'complaint')!.how],
        ['Withdraw your consent', r.withdrawal_method],
      ],
    },
    { heading: 'This receipt', rows: [['Reference', r.record_id], ['Receipt', r.receipt_id], ['Kept until', when(r.retention_period.kept_until)]] },
  ];
  return {
    title: 'Your consent receipt',
    intro: `${org} checked your identity with your consent. This receipt is yours to keep: it names no NIN, vNIN, name or photo, and it is erased with the verification on ${r.retention_period.kept_until.slice(0, 10)}.${r.sandbox ? ' Sandbox: test data of an invented person.' : ''}`,
    sections: rows,
  };
}

/** The receipt as plain text (the e-mail's body). */
export function readableText(r: ConsentReceipt): string {
  const v = readable(r);
  const lines = [v.title, '', v.intro, ''];
  for (const s of v.sections) {
    lines.push(s.heading.toUpperCase());
    for (const [k, val] of s.rows) lines.push(`${k}: ${val}`);
    lines.push('');
  }
  return lines.join('\n').trimEnd();
}
