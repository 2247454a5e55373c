import nodemailer from 'nodemailer';
import type { DatabasePool } from 'slonik';
import type { Config } from '../../config.ts';
import { jobIds, type JobResult } from '../../jobs/catalog.ts';
import type { Producer } from '../../jobs/producer.ts';
import { describe } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import * as repo from './outbox.repository.ts';
import { receiptPayload } from './mail.schemas.ts';
import { renderReceipt } from './templates/receipt.ts';
import { openReceiptRecipients, openSealedMail } from './sealed-mail.ts';

/** SMTP when SMTP_URL is set (its query string carries options such as ignoreTLS); otherwise JSON only. */
export function createMailTransport(config: Config) {
  return config.SMTP_URL ? nodemailer.createTransport(config.SMTP_URL) : nodemailer.createTransport({ jsonTransport: true });
}

/**
 * Sends one e-mail from the outbox: a top-up receipt, rendered from its row, or a sealed e-mail
 * (password resets, low-balance alerts), opened here and erased once sent. A sent row is never sent again; a crash between the SMTP answer
 * and the status update can still send twice (at-least-once), which beats never.
 */
export async function deliverMail(
  deps: { config: Config; db: DatabasePool },
  outboxId: number,
  opts: { finalAttempt: boolean },
  log: Logger,
): Promise<JobResult<'outbox.deliver'>> {
  const row = await repo.findOutbox(deps.db, outboxId);
  if (!row) return { outcome: 'missing' };
  if (row.status !== 'pending') return { outcome: 'already_sent' };
  let message: { to: string | string[]; subject: string; text: string; html?: string };
  if (row.kind === 'receipt_email') {
    const payload = receiptPayload.parse(row.payload);
    const to = openReceiptRecipients(deps.config.encryptionKeys, row, payload);
    if (!to) return { outcome: 'missing' };
    message = { to, ...renderReceipt(payload, { newBalance: row.new_balance, invoiceNumber: row.invoice_number }) };
  } else {
    const sealed = openSealedMail(deps.config.encryptionKeys, row);
    if (!sealed) return { outcome: 'missing' };
    message = sealed;
  }
  const transport = createMailTransport(deps.config);
  try {
    await transport.sendMail({ from: deps.config.MAIL_FROM, ...message });
  } catch (err) {
    // SMTP replies can quote addresses: only the code goes to the row and the log.
    const e = err as { code?: string; responseCode?: number };
    const summary = `${e.code ?? 'error'}${e.responseCode ? ` ${e.responseCode}` : ''}`;
    await repo.markOutboxAttemptFailed(deps.db, outboxId, summary, opts.finalAttempt);
    log.warn({ outboxId, kind: row.kind, error: summary, final: opts.finalAttempt }, 'e-mail not sent');
    throw new Error(`receipt ${outboxId} not sent: ${summary}`);
  } finally {
    transport.close();
  }
  await repo.markOutboxSent(deps.db, outboxId);
  log.info({ outboxId, kind: row.kind, transport: deps.config.SMTP_URL ? 'smtp' : 'json' }, 'e-mail sent');
  return { outcome: 'sent' };
}

/**
 * After the commit that queued an e-mail: its delivery job, at once. Without a producer (an operator's
 * command), or if Redis refuses it, the outbox sweep sends it within a minute, so a failure is a warning.
 */
export async function deliverSoon(producer: Producer | undefined, outboxId: number, log: Logger, what: string): Promise<void> {
  if (!producer) return;
  try {
    await producer.enqueue('outbox.deliver', { outboxId }, { jobId: jobIds.outbox(outboxId) });
  } catch (err) {
    log.warn({ err: describe(err), outboxId }, `${what} not queued; the outbox sweep will send it`);
  }
}

const OUTBOX_SWEEP_LIMIT = 100;

/** Re-queues e-mails whose delivery job was lost; the job id makes a still-known job a no-op. */
export async function sweepOutbox(deps: { db: DatabasePool; producer: Producer }): Promise<JobResult<'outbox.sweep'>> {
  const ids = await repo.listStaleOutbox(deps.db, OUTBOX_SWEEP_LIMIT);
  for (const id of ids) await deps.producer.enqueue('outbox.deliver', { outboxId: id }, { jobId: jobIds.outbox(id) });
  return { enqueued: ids.length };
}
