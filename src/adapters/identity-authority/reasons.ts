import type { Reason } from './types.ts';

/**
 * Reasons offered when the upstream has no reasons endpoint (Prembly, Dojah). The contract's three
 * keys (corporate, nyscCheck, telecommunicationSimReg) must always be present, because requests are
 * validated against this list.
 */
export const DEFAULT_REASONS: readonly Reason[] = [
  { key: 'corporate', label: 'Corporate', description: 'Identity check by a registered organisation for its own customers or staff.' },
  { key: 'nyscCheck', label: 'NYSC check', description: 'Verification of a corps member for the National Youth Service Corps.' },
  {
    key: 'telecommunicationSimReg',
    label: 'SIM registration',
    description: 'Linking a SIM card to its owner for a telecommunications operator.',
  },
];
