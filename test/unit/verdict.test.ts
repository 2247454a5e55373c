import { describe, expect, it } from 'vitest';
import { faceBody, livenessRequiredOf } from '../../src/modules/verification/face-kept.ts';
import { VERDICT, VERDICT_REASONS, outcomeOf, verdictOf, verdictOfLink, verdictOfVerification } from '../../src/modules/verification/verdict.ts';

const compared = (match: boolean, liveness = 'not_checked') => ({ status: 'compared' as const, match, confidence: match ? 90 : 20, liveness });
const noPhoto = { status: 'no_reference_photo' as const, match: null, confidence: null, liveness: 'not_checked' };

describe('the one verdict', () => {
  it('When a lookup found the record and nothing else was asked, then it is verified with no reason', () => {
    expect(verdictOf({ outcome: 'found' })).toEqual({ verdict: 'verified', verdict_reasons: [] });
  });

  it('When a verification is pending or its record was erased, then there is no verdict yet (null) and no reason', () => {
    expect(verdictOf({ outcome: 'pending' })).toEqual({ verdict: null, verdict_reasons: [] });
    expect(verdictOf({ outcome: 'expired', face: compared(true) })).toEqual({ verdict: null, verdict_reasons: [] });
  });

  it('When a face was asked, then only a compared face with match true verifies; a mismatch, no reference photo and no comparison each say why', () => {
    expect(verdictOf({ outcome: 'found', face: compared(true) })).toEqual({ verdict: 'verified', verdict_reasons: [] });
    expect(verdictOf({ outcome: 'found', face: compared(false) })).toEqual({ verdict: 'not_verified', verdict_reasons: ['face_no_match'] });
    expect(verdictOf({ outcome: 'found', face: noPhoto })).toEqual({ verdict: 'not_verified', verdict_reasons: ['no_reference_photo'] });
    expect(verdictOf({ outcome: 'found', face: null })).toEqual({ verdict: 'not_verified', verdict_reasons: ['face_not_compared'] });
  });

  it('When liveness comes back, then passed is needed: failed says liveness_failed; required but not checked says liveness_not_checked', () => {
    expect(verdictOf({ outcome: 'found', face: compared(true, 'passed') })).toEqual({ verdict: 'verified', verdict_reasons: [] });
    expect(verdictOf({ outcome: 'found', face: compared(true, 'failed') })).toEqual({ verdict: 'not_verified', verdict_reasons: ['liveness_failed'] });
    expect(verdictOf({ outcome: 'found', face: compared(false, 'failed') })).toEqual({ verdict: 'not_verified', verdict_reasons: ['face_no_match', 'liveness_failed'] });
    expect(verdictOf({ outcome: 'found', face: compared(true), livenessRequired: true })).toEqual({ verdict: 'not_verified', verdict_reasons: ['liveness_not_checked'] });
    expect(verdictOf({ outcome: 'found', face: compared(true, 'passed'), livenessRequired: true })).toEqual({ verdict: 'verified', verdict_reasons: [] });
  });

  it('When a match-only verification was asked, then all_match decides: a detail that differs is details_no_match', () => {
    expect(verdictOf({ outcome: 'found', details: { all_match: true } })).toEqual({ verdict: 'verified', verdict_reasons: [] });
    expect(verdictOf({ outcome: 'found', details: { all_match: false } })).toEqual({ verdict: 'not_verified', verdict_reasons: ['details_no_match'] });
  });

  it('When nothing was found, the authority refused the vNIN or the verification failed, then it is not verified with that reason alone, whatever was asked', () => {
    expect(verdictOf({ outcome: 'not_found', face: null })).toEqual({ verdict: 'not_verified', verdict_reasons: ['not_found'] });
    expect(verdictOf({ outcome: 'refused', details: null })).toEqual({ verdict: 'not_verified', verdict_reasons: ['refused'] });
    expect(verdictOf({ outcome: 'failed', face: null })).toEqual({ verdict: 'not_verified', verdict_reasons: ['failed'] });
  });

  it('When a row or a link submission is read, then a vNIN that does not exist is not_found and the other vNIN refusals are refused', () => {
    expect(outcomeOf('not_found', 'vnin_not_found')).toBe('not_found');
    expect(outcomeOf('not_found', 'vnin_used')).toBe('refused');
    expect(outcomeOf('refused', 'vnin_expired')).toBe('refused');
    expect(outcomeOf('refused', 'vnin_not_found')).toBe('not_found');
    expect(verdictOfVerification({ status: 'found', failure_code: null, mode: 'face' }, { face: compared(false) }).verdict_reasons).toEqual(['face_no_match']);
    expect(verdictOfVerification({ status: 'found', failure_code: null, mode: 'match' }, { all_match: false }).verdict_reasons).toEqual(['details_no_match']);
    expect(verdictOfVerification({ status: 'found', failure_code: null, mode: 'nin' }, { fname: 'x' }).verdict).toBe('verified');
    expect(verdictOfLink({ status: 'found', code: null }, undefined).verdict).toBe('verified');
    expect(verdictOfLink({ status: 'found', code: null }, noPhoto).verdict_reasons).toEqual(['no_reference_photo']);
    expect(verdictOfLink({ status: 'abandoned', code: null }, undefined).verdict_reasons).toEqual(['failed']);
  });

  it('When the rule is read, then its checks are exactly the documented reasons, in their order', () => {
    expect(VERDICT.map((c) => c.name)).toEqual([...VERDICT_REASONS]);
  });

  it("When the organisation required liveness at the comparison (kept with it), then every stored verdict needs liveness passed, whatever the setting says later; a link asking for liveness too", () => {
    const row = { status: 'found' as const, failure_code: null, mode: 'face' };
    const face = { ...compared(true), threshold: 75, model: 'm' };
    expect(livenessRequiredOf({ require_liveness: true })).toEqual({ liveness_required: true });
    expect(livenessRequiredOf({ require_liveness: false })).toEqual({});
    // The requery, history, slip, subject export and verification.completed read the kept value.
    expect(verdictOfVerification(row, { face, liveness_required: true })).toEqual({ verdict: 'not_verified', verdict_reasons: ['liveness_not_checked'] });
    expect(verdictOfVerification(row, { face: { ...face, liveness: 'passed' }, liveness_required: true })).toEqual({ verdict: 'verified', verdict_reasons: [] });
    expect(verdictOfVerification(row, { face })).toEqual({ verdict: 'verified', verdict_reasons: [] });
    expect(verdictOfVerification(row, { face: { ...face, liveness: 'failed' } })).toEqual({ verdict: 'not_verified', verdict_reasons: ['liveness_failed'] });
    // The sync answer's body.
    const body = faceBody('REF', { face: face as never, liveness_required: true });
    expect([body.verdict, body.verdict_reasons]).toEqual(['not_verified', ['liveness_not_checked']]);
    expect(body).not.toHaveProperty('liveness_required');
    // A link: its own liveness field (or the organisation's setting) as the third input.
    expect(verdictOfLink({ status: 'found', code: null }, compared(true), true)).toEqual({ verdict: 'not_verified', verdict_reasons: ['liveness_not_checked'] });
    expect(verdictOfLink({ status: 'found', code: null }, compared(true, 'passed'), true)).toEqual({ verdict: 'verified', verdict_reasons: [] });
    expect(verdictOfLink({ status: 'found', code: null }, compared(true))).toEqual({ verdict: 'verified', verdict_reasons: [] });
    expect(verdictOfLink({ status: 'found', code: null }, undefined, true)).toEqual({ verdict: 'verified', verdict_reasons: [] });
  });
});
