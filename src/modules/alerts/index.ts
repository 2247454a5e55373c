// The alerts module's door: e-mails the service sends on its own when an organisation should act, and
// what follows a debit that may call for one (or for an automatic top-up).
export { followDebit } from './after-debit.ts';
export { checkLowBalance } from './low-balance-alert.ts';
