import { Router } from 'express';
import type { AppContext } from '../../context.ts';
import { parseInput } from '../../lib/http.ts';
import { operatorAuth } from '../ops/index.ts';
import { pageQuery, type OrganisationView } from './platform.schemas.ts';
import { organisationPage } from './platform.service.ts';
import { roles } from '../../lib/roles.ts';

export const ORGANISATIONS_PAGE_PATH = '/admin/organisations';

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Every value that reaches the page goes through here: names and usernames are chosen by tenants. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

const count = (n: number): string => n.toLocaleString('en-GB');
const naira = (kobo: number, currency: string): string =>
  `${currency} ${(kobo / 100).toLocaleString('en-GB', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
const day = (iso: string): string => iso.slice(0, 10);

// No script at all: helmet's Content-Security-Policy stays as it is for the whole service. The icon is
// the service's own (/favicon.ico, served by the API process).
const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#111}
h1{font-size:20px;margin:0 0 4px}
nav a{margin-right:12px}
table{border-collapse:collapse;width:100%;margin-top:16px}
th,td{border-bottom:1px solid #ddd;padding:6px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-weight:600;text-transform:capitalize}
.badge-silver{background:#d9d9d9}.badge-gold{background:#f2c94c}.badge-diamond{background:#9ad0f5}
.retired{color:#888}.off{color:#b00020}
ul.users{margin:0;padding-left:16px}
`;

function row(o: OrganisationView): string {
  const badge = o.loyalty_badge ? `<span class="badge badge-${escapeHtml(o.loyalty_badge)}">${escapeHtml(o.loyalty_badge)}</span>` : '';
  const users = o.users
    .map((u) => `<li>${escapeHtml(u.username)} (${escapeHtml(roles.label(u.role))}${u.disabled ? ', disabled' : ''})</li>`)
    .join('');
  const last = o.last_topup
    ? `${escapeHtml(day(o.last_topup.credited_at))}: ${escapeHtml(count(o.last_topup.units + o.last_topup.bonus_units))} units, ${escapeHtml(naira(o.last_topup.total_amount, o.last_topup.currency))}`
    : 'never';
  const subscription = o.deleted_at ? `retired ${escapeHtml(day(o.deleted_at))}` : o.subscription_active ? 'active' : '<span class="off">inactive</span>';
  return `<tr data-org-id="${escapeHtml(o.id)}"${o.deleted_at ? ' class="retired"' : ''}>
<td class="num">${escapeHtml(o.id)}</td><td class="name">${escapeHtml(o.name)}</td><td>${escapeHtml(o.tenancy)}${o.affiliate ? ', affiliate' : ''}</td>
<td>${subscription}</td><td class="num">${escapeHtml(count(o.units))}</td><td class="num">${escapeHtml(count(o.reserved_units))}</td>
<td class="num">${escapeHtml(count(o.lifetime_units))}</td><td class="badge-cell">${badge}</td><td><ul class="users">${users}</ul></td><td>${last}</td></tr>`;
}

function page(orgs: OrganisationView[], next: string | null, limit: number | undefined): string {
  const nextLink = next
    ? `<p><a rel="next" href="${escapeHtml(`${ORGANISATIONS_PAGE_PATH}?${new URLSearchParams({ cursor: next, ...(limit ? { limit: String(limit) } : {}) })}`)}">Next page</a></p>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="/favicon.ico"><title>Organisations - idverify</title><style>${STYLE}</style></head>
<body><h1>Organisations</h1><nav><a href="${ORGANISATIONS_PAGE_PATH}">First page</a><a href="/admin/queues">Queues</a></nav>
<table id="organisations"><thead><tr><th>ID</th><th>Name</th><th>Tenancy</th><th>Subscription</th><th>Balance</th><th>Reserved</th>
<th>Lifetime units</th><th>Loyalty badge</th><th>Users</th><th>Last top-up</th></tr></thead>
<tbody>${orgs.map(row).join('\n')}</tbody></table>${orgs.length === 0 ? '<p>No organisations.</p>' : ''}${nextLink}</body></html>`;
}

/** The same view as GET /platform/organisations, as a page beside the queue board and behind its sign-in. */
export function platformPageRoutes(ctx: AppContext): Router {
  const r = Router();
  r.get(ORGANISATIONS_PAGE_PATH, operatorAuth(ctx), async (req, res) => {
    const q = parseInput(pageQuery, req.query);
    const { data, next_cursor } = await organisationPage(ctx.db, q);
    res.setHeader('Cache-Control', 'no-store');
    res.type('html').send(page(data, next_cursor, q.limit));
  });
  return r;
}
