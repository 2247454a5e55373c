import type { Words } from './format.ts';

/** Why the page could not take the submission (the links module's turn-away codes). */
export type LinkRefusedCode = 'insufficient_units' | 'organisation_cannot_verify';

/**
 * A person was turned away on a verification link's page. `heldBack`: how many more were turned away
 * in the hour before (the mail window's count). Never the person: the page never told us who they are.
 */
export type LinkRefusedData = { organisation: string; linkId: string; clientRef: string | null; code: LinkRefusedCode; heldBack: number };

const WHY: Record<LinkRefusedCode, string> = {
  insufficient_units: 'your wallet did not hold the units to pay for it',
  organisation_cannot_verify: "your organisation's subscription is not active, so it cannot make verifications",
};

export function linkRefused(d: LinkRefusedData, portal: string): Words {
  const fix = d.code === 'insufficient_units' ? `Top up (or check automatic top-up): ${portal}/portal/top-up` : 'Ask us to make the subscription active again: reply to this e-mail.';
  const text = [
    `Someone opened a verification link of ${d.organisation} (${d.linkId}${d.clientRef ? `, your reference ${d.clientRef}` : ''}) and tried to verify, but ${WHY[d.code]}.`,
    'They were told that you cannot take verifications at the moment, shown your support contact, and offered to try again. Nothing was charged and the link keeps its use.',
    ...(d.heldBack > 0 ? [`${d.heldBack} more ${d.heldBack === 1 ? 'person was' : 'people were'} turned away in the hour before this e-mail (listed on their links).`] : []),
    '',
    fix,
    '',
    `The link lists this as a refused submission (GET /v1/verification-links/${d.linkId}), and your webhook endpoints received verification_link.submitted. You get at most one such e-mail an hour.`,
    '',
  ].join('\n');
  return { subject: `A person could not verify: ${d.organisation} cannot take verifications`, text };
}
