// The mail module's door: the outbox (every e-mail waits there, queued in the transaction of the
// change it reports), the e-mails' words (templates/, one a message: callers give data, not text),
// sealing of e-mails that carry personal data, and sending. Other modules and entry points import
// mail from here only.
export { queueMail } from './messages.ts';
export { queueReceipt } from './sealed-mail.ts';
export { deliverMail, deliverSoon, sweepOutbox } from './delivery.ts';
export { queueWindowedMail } from './windowed-mail.ts';
export { resealOutbox, sealedOutboxCounts } from './reseal.ts';
