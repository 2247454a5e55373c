/**
 * A face result's `liveness` (the API's FaceResult and a link submission's face) as the portal says it.
 * Typed as text: the generated type names the values the API documents, and any other reads as itself.
 */
export function livenessText(liveness: string): string {
  switch (liveness) {
    case 'passed':
      return 'passed: a live person turned their head as asked';
    case 'failed':
      return 'failed: not a live person turning their head as asked';
    case 'not_checked':
      return 'not checked';
    default:
      return liveness;
  }
}
