import nodemailer from 'nodemailer';
import type { DatabasePool } from 'slonik';
import type { Config } from '../../config.ts';
import { jobIds, type JobResult } from '../../jobs/catalog.ts';
import type { Producer } from '../../jobs/producer.ts';
import type { Logger } from '../../lib/logger.ts';
import * as repo from './topup.repository.ts';
import { openSealedMail } from './sealed-mail.ts';
import { receiptPayload, type ReceiptPayload } from './topup.schemas.ts';

export type Mail = { subject: string; text: string; html: string };

/** Integer kobo as `NGN 11,015.23`. */
export function formatNgn(kobo: number): string {
  const sign = kobo < 0 ? '-' : '';
  const abs = Math.abs(kobo);
  return `${sign}NGN ${Math.floor(abs / 100).toLocaleString('en-US')}.${String(abs % 100).padStart(2, '0')}`;
}

const units = (n: number): string => n.toLocaleString('en-US');
// Receipts are read in Nigeria: the date is the Lagos calendar day, whatever the server's zone.
const lagosDate = new Intl.DateTimeFormat('en-GB', { timeZone: 'Africa/Lagos', day: 'numeric', month: 'long', year: 'numeric' });
const capitalise = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The receipt e-mail. Pure, so its wording is testable without a mail server. */
export function renderReceipt(p: ReceiptPayload, newBalance: number | null): Mail {
  const lines: [string, string][] = [
    ['Organisation', p.organisation],
    ['Reference', p.reference],
    ['Date', lagosDate.format(new Date(p.credited_at))],
    ['Units bought', units(p.units)],
    ['Bonus units', units(p.bonus_units)],
    ['Units credited', units(p.units + p.bonus_units)],
    ['Base amount', formatNgn(p.base_amount)],
    ['VAT', formatNgn(p.vat_amount)],
    ['Service charge', formatNgn(p.service_charge)],
    ['Total paid', formatNgn(p.total_amount)],
  ];
  if (newBalance !== null) lines.push(['New balance', `${units(newBalance)} units`]);
  // Badges exist for self-hosted tenants only; hosted tenants' receipts say nothing about them.
  if (p.tenancy === 'self-hosted') lines.push(['Loyalty badge', p.loyalty_badge ? capitalise(p.loyalty_badge) : 'none yet (Silver from 20,000 lifetime units)']);
  const note = 'There is no per-print charge for verification slips.';
  const text = [`Payment receipt for ${p.organisation}`, '', ...lines.map(([k, v]) => `${k}: ${v}`), '', note, ''].join('\n');
  const rows = lines.map(([k, v]) => `<tr><th align="left">${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join('');
  const html = `<!doctype html><html><body><h1>Payment receipt</h1><table>${rows}</table><p>${escapeHtml(note)}</p></body></html>`;
  return { subject: `Payment receipt ${p.reference}`, text, html };
}

/** SMTP when SMTP_URL is set (its query string carries options such as ignoreTLS); otherwise JSON only. */
export function createMailTransport(config: Config) {
  return config.SMTP_URL ? nodemailer.createTransport(config.SMTP_URL) : nodemailer.createTransport({ jsonTransport: true });
}

/**
 * Sends one e-mail from the outbox: a receipt, rendered here, or another module's sealed e-mail
 * (password resets), opened here and erased once sent. A sent row is never sent again; a crash between the SMTP answer
 * and the status update can still send twice (at-least-once), which beats never.
 */
export async function deliverReceipt(
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
    message = { to: payload.recipients, ...renderReceipt(payload, row.new_balance) };
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

const OUTBOX_SWEEP_LIMIT = 100;

/** Re-queues receipts whose delivery job was lost; the job id makes a still-known job a no-op. */
export async function sweepOutbox(deps: { db: DatabasePool; producer: Producer }): Promise<JobResult<'outbox.sweep'>> {
  const ids = await repo.listStaleOutbox(deps.db, OUTBOX_SWEEP_LIMIT);
  for (const id of ids) await deps.producer.enqueue('outbox.deliver', { outboxId: id }, { jobId: jobIds.outbox(id) });
  return { enqueued: ids.length };
}
