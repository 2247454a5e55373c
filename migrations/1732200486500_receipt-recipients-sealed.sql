-- Up Migration
-- A receipt's addresses (the billing address, the paying user's e-mail) are personal data: a receipt
-- now keeps them sealed in body_enc, erased once sent, as every other e-mail does. Receipts queued
-- before kept them in plain in payload.recipients: those already sent or given up lose them here
-- (a pending one is still delivered from them and loses them when sent).
UPDATE outbox SET payload = payload - 'recipients'
WHERE kind = 'receipt_email' AND status <> 'pending' AND payload ? 'recipients';

-- Down Migration
-- Nothing to undo: the erased addresses are not restored (the code before reads them only from
-- pending receipts, which keep theirs).
