// The alerts module's door: e-mails the service sends on its own when an organisation should act.
export { checkLowBalance } from './low-balance-alert.ts';
