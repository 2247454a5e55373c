import type { Readable } from './readable.ts';

/**
 * The receipt's page at /r/<token>: plain HTML, no script, its few styles inline under the
 * response's nonce. Everything in it comes from the receipt (escaped); the e-mail form posts back
 * here and works without JavaScript.
 */
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

const STYLE = `*,*::before,*::after{box-sizing:border-box}
body{margin:0;font:1.0625rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif;color:#1b1f23;background:#f4f6f8}
main{max-width:40rem;margin:0 auto;padding:1rem 1rem 3rem;background:#fff;min-height:100vh}
h1{font-size:1.5rem;line-height:1.25;margin:.5rem 0 1rem}
h2{font-size:1.1875rem;margin:1.5rem 0 .5rem;border-top:1px solid #d0d7de;padding-top:1rem}
p,dd{overflow-wrap:anywhere}
dl{margin:0}dt{font-weight:600;margin-top:.625rem}dd{margin:0}
a{color:#0b5cad}
.actions{display:flex;flex-wrap:wrap;gap:.75rem 1.25rem;margin:1rem 0}
label{display:block;font-weight:600;margin-bottom:.25rem}
input{display:block;width:100%;font:inherit;padding:.625rem .75rem;border:2px solid #6b7280;border-radius:6px;margin-bottom:.75rem}
button{font:inherit;font-weight:600;min-height:3rem;padding:.625rem 1.25rem;border-radius:6px;border:2px solid #0b5cad;background:#0b5cad;color:#fff;cursor:pointer}
.hint{color:#4b5563;font-size:.9375rem}
.status{padding:.75rem 1rem;background:#eef4fb;border-radius:6px}
.error{padding:.75rem 1rem;color:#7a1610;background:#fdecea;border:1px solid #f1aeb5;border-radius:6px}
:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}`;

export type PageNote = { kind: 'status' | 'error'; text: string } | null;

function page(title: string, body: string, nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="same-origin">
<title>${esc(title)}</title>
<link rel="icon" href="/favicon.ico">
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

export function renderReceiptPage(v: Readable, o: { path: string; nonce: string; note: PageNote; email?: string }): string {
  const sections = v.sections
    .map((s) => `<section aria-labelledby="h-${slug(s.heading)}">
<h2 id="h-${slug(s.heading)}">${esc(s.heading)}</h2>
<dl>
${s.rows.map(([k, val]) => `<dt>${esc(k)}</dt><dd>${esc(val)}</dd>`).join('\n')}
</dl>
</section>`)
    .join('\n');
  const note = o.note ? `<p class="${o.note.kind}" role="${o.note.kind === 'error' ? 'alert' : 'status'}">${esc(o.note.text)}</p>\n` : '';
  return page(
    v.title,
    `<h1>${esc(v.title)}</h1>
<p>${esc(v.intro)}</p>
<p class="actions"><a href="${o.path}.pdf" download>Download the PDF</a> <a href="${o.path}.json" type="application/json">Machine-readable (JSON, ISO/IEC TS 27560)</a></p>
${note}${sections}
<section aria-labelledby="h-email">
<h2 id="h-email">E-mail it to yourself</h2>
<form method="post" action="${o.path}/email">
<label for="email">Your e-mail address</label>
<p id="email-hint" class="hint">We use it once, to send this receipt, and do not keep it.</p>
<input id="email" name="email" type="email" autocomplete="email" required maxlength="254" aria-describedby="email-hint"${o.note?.kind === 'error' ? ' aria-invalid="true"' : ''}${o.email ? ` value="${esc(o.email)}"` : ''}>
<button type="submit">Send me the receipt</button>
</form>
</section>`,
    o.nonce,
  );
}

/** The page of a receipt that is not (or no longer) there: 404, says why it may be. */
export function renderNoReceipt(nonce: string): string {
  return page(
    'No receipt here',
    `<h1>No receipt here</h1>
<p>This receipt does not exist or was erased with its verification when the organisation's retention period ended. Check that you copied all of its address.</p>`,
    nonce,
  );
}

const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
