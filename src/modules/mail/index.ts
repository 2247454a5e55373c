// The mail module's door: the outbox (every e-mail waits there, queued in the transaction of the
// change it reports), sealing of e-mails that carry personal data, and sending. Other modules and
// entry points import mail from here only.
export { queueReceipt, queueSealedMail, type SealedMail } from './sealed-mail.ts';
export { deliverMail, deliverSoon, sweepOutbox } from './delivery.ts';
export { queueWindowedMail } from './windowed-mail.ts';
export { resealOutbox, sealedOutboxCounts } from './reseal.ts';
