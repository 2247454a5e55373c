import { z } from 'zod';
import { bearer, errorResponse, errors, json, listEnvelope, listParams, md, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { TOPUP_CSV_COLUMNS, topupView } from './history.schemas.ts';
import { topupPathParams, topupStatus } from './topup.schemas.ts';

/** The invoice's rules, markdown (shown under the operation at /docs). */
const INVOICE = md(
  'Every credited top-up has a VAT invoice (PDF, one',
  'page; organisation administrators and the `finance` role; 404 while the top-up is not credited). Its',
  'number, `INV-<year>-<6 digits>` (the Lagos year of the credit), is given in the credit\'s own transaction',
  'from one counter row per year, so numbers run without gaps across the service: concurrent credits wait',
  'for each other\'s number, and a credit that rolls back gives its number back. It shows the seller',
  '(`INVOICE_SELLER_NAME`, `INVOICE_SELLER_ADDRESS`, `INVOICE_SELLER_TIN`), the buyer (the organisation\'s',
  'name, `address` and `tin` from its settings, as they were when the payment was credited), the date of',
  'issue (the credit\'s, when the number was given), the date of payment (the processor\'s `paid_at`, in Lagos, which comes before the credit when the webhook was lost;',
  'the credit\'s date for top-ups credited before it was kept), units, unit price, base, VAT (`VAT_BPS`, 7.5 %), the processor fee, the total and the payment',
  'reference, amounts as `NGN 11,015.23` (the PDF fonts have no ₦ sign). Top-ups credited before invoices',
  'existed were numbered by the migration in the order they were credited. The `topup.credited` audit',
  'event carries the number (`details.invoice`).',
  '',
  'Content negotiation follows the statements\' rule: the invoice exists only as `application/pdf`; an `Accept` that',
  'does not allow it (`text/csv`, `application/json`, ...) is 406, never a PDF it did not ask for. No `Accept`, `*/*`',
  'or `application/*` gets the PDF. The top-up\'s figures as JSON, with `invoice_number`, are `GET /topups/{reference}`.',
);

/** GET /topups's own rules, markdown (shown under it at /docs; the tag's guide is history.guide.md). */
const TOPUPS = md(
  'Organisation administrators and the `finance` role (API clients: `history:read`). Filter `status` (`pending`, `credited`, `failed`,',
  '`abandoned`, `amount_mismatch`), `from`, `to`. Each top-up:',
  '```json',
  '{"reference": "TOP-1-0f3c9a7d21b4e8c6", "status": "credited", "units": 100, "bonus_units": 0,',
  ' "base_amount": 1000000, "vat_amount": 75000, "service_charge": 26523, "total_amount": 1101523,',
  ' "paid_amount": 1101523, "created_at": "2026-03-01T09:28:10.512Z", "credited_at": "2026-03-01T09:30:00.004Z",',
  ' "invoice_number": "INV-2026-000042", "paid_at": "2026-03-01T09:28:55.000Z"}',
  '```',
  '`paid_amount` is what the processor reported paid (`null` until a payment was seen); `paid_at` when the payer paid, as the',
  'processor says (an ISO 8601 instant, UTC; `null` until a payment was seen, and on top-ups credited before it was kept; it may come',
  'before `credited_at` when the notification was lost); `credited_at`',
  'and `invoice_number` (its VAT invoice: `GET /topups/{reference}/invoice`) are `null` until the wallet is credited. With `Accept: text/csv`: the whole filtered range as',
  '`topups-<org>.csv`, columns `reference,status,units,bonus_units,base_amount,vat_amount,service_charge,total_amount,paid_amount,created_at,credited_at,invoice_number,paid_at`',
  '(empty for `null`), the same streaming, headers and limits as every export (see the tag, "CSV export" and "CSV export limits").',
);

export function register(registry: OpenAPIRegistry): void {
  const Topup = topupView.meta({ id: 'Topup' });
  registry.registerPath({
    method: 'get',
    path: '/topups',
    operationId: 'listTopups',
    tags: [TAGS.history],
    summary: "The organisation's top-ups",
    description: TOPUPS,
    security: bearer,
    request: { query: z.object({ status: topupStatus.optional().meta({ description: 'Only top-ups in this status' }), ...listParams }) },
    responses: {
      200: {
        description: 'A page of top-ups (JSON), or the whole range (CSV)',
        content: {
          'application/json': { schema: listEnvelope(Topup).meta({ id: 'TopupPage' }) },
          'text/csv': { schema: z.string().meta({ description: `Columns: ${TOPUP_CSV_COLUMNS.join(', ')}; RFC 4180, CRLF line ends; amounts in kobo` }) },
        },
      },
      ...errors(401, 406, 422, 429),
      400: errorResponse('A filter, limit or cursor breaks a rule'),
      403: errorResponse('The caller is neither an organisation administrator nor a finance officer'),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/topups/{reference}',
    operationId: 'getTopup',
    tags: [TAGS.history],
    summary: 'One top-up',
    description:
      'Organisation administrators and the `finance` role; the reference comes from POST /topup/initialize, the top-up as `GET /topups` lists it. ' +
      'A reference of another organisation: 403 `This top-up belongs to another organisation` (as `POST /topup/verify`); unknown: 404 ' +
      '`Top-up reference not found`; not `TOP-<org>-<16 hex>`: 400. JSON only: an `Accept` that does not allow `application/json` ' +
      '(`text/csv`, `application/pdf`, ...) is 406 `Accept must allow application/json` (the list, `GET /topups`, is the one with a CSV).',
    security: bearer,
    request: { params: topupPathParams },
    responses: {
      200: json(Topup, 'The top-up'),
      ...errors(401, 406, 429),
      400: errorResponse('Not a top-up reference'),
      403: errorResponse('The caller is neither an organisation administrator nor a finance officer, or the reference belongs to another organisation'),
      404: errorResponse('Top-up reference not found'),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/topups/{reference}/invoice',
    operationId: 'getTopupInvoice',
    tags: [TAGS.history],
    summary: "A credited top-up's VAT invoice (PDF)",
    description: INVOICE,
    security: bearer,
    request: { params: topupPathParams },
    responses: {
      200: {
        description: 'The invoice; `Content-Disposition` names the file after its number',
        content: { 'application/pdf': { schema: z.string().meta({ format: 'binary', description: 'PDF document, one page' }) } },
      },
      ...errors(401, 406, 429),
      400: errorResponse('Not a top-up reference'),
      403: errorResponse('Not an administrator or finance user, or the reference belongs to another organisation'),
      404: errorResponse('Top-up reference not found, or the top-up was not credited (no invoice)'),
    },
  });
}
