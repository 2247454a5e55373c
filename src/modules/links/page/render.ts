import { createHash } from 'node:crypto';
import messages from './messages.en.json' with { type: 'json' };

/**
 * The person's page, server-rendered: every step is in the HTML (all but the first hidden), with all
 * its words from one messages file (messages.en.json, so that it can be translated), and the one
 * script (link.js) moves between the steps. Nothing here comes from the person; what comes from the
 * organisation (its name, the purpose) is escaped.
 */
export type Messages = typeof messages;
export const MESSAGES: Messages = messages;

/** `{name}` placeholders filled in; the text stays plain (escape it where it goes into HTML). */
export function fill(text: string, vars: Record<string, string | number>): string {
  return text.replace(/\{(\w+)\}/g, (all, k: string) => (Object.hasOwn(vars, k) ? String(vars[k]) : all));
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

export const ussdOf = (code: string) => `*346*3*<NIN>*${code}#`;

/** The consent the person gives, word for word as shown and as recorded on the verification. */
export function consentText(org: string, purpose: string, requireFace: boolean): string {
  return fill(MESSAGES.intro.consent_text, { org, purpose, face_clause: requireFace ? MESSAGES.intro.face_clause : '' });
}

/** Names the notice: its language and a digest of its wording, so a changed text is a new version. */
export const NOTICE_VERSION = `verification-link-${MESSAGES.lang}-${createHash('sha256').update(MESSAGES.intro.consent_text + MESSAGES.intro.face_clause).digest('hex').slice(0, 10)}`;

export type PageView = {
  org: string;
  purpose: string;
  reasonLabel: string;
  requireFace: boolean;
  /** The face match with a liveness check: head poses before the camera in place of the selfie (require_face too). */
  liveness: boolean;
  enterpriseCode: string;
  csrf: string;
  nonce: string;
  assets: { js: string; css: string };
  /** The organisation's support_contact: shown wherever the page cannot go on; null: none set. */
  supportContact: string | null;
};

/** Who to turn to when the page cannot go on: the organisation's support contact, or the organisation itself. */
export function helpText(org: string, supportContact: string | null): string {
  return supportContact === null ? fill(MESSAGES.help.no_contact, { org }) : fill(MESSAGES.help.contact, { org, contact: supportContact });
}

/** The vNIN step's help: copy the USSD code without leaving the page, and what to do when the phone number is not the NIN's. */
function vninHelp(org: string, supportContact: string | null): string {
  const h = MESSAGES.help;
  const contact = supportContact === null ? '' : `\n<p>${esc(helpText(org, supportContact))}</p>`;
  return `<p><button type="button" id="copy-ussd" class="secondary">${esc(h.copy)}</button></p>
<p id="copy-status" class="hint" role="status" aria-live="polite"></p>
<details class="faq"><summary>${esc(h.not_linked_q)}</summary><p>${esc(fill(h.not_linked_a, { org }))}</p>${contact}</details>`;
}

function head(title: string, v: { nonce: string; assets: { css: string; js?: string } }): string {
  return `<!doctype html>
<html lang="${esc(MESSAGES.lang)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>${esc(title)}</title>
<link rel="icon" href="/favicon.ico">
<link rel="stylesheet" href="/v/assets/${v.assets.css}" nonce="${v.nonce}">
${v.assets.js ? `<script src="/v/assets/${v.assets.js}" nonce="${v.nonce}" defer></script>\n` : ''}</head>`;
}

export function renderPage(v: PageView): string {
  const m = MESSAGES;
  const org = esc(v.org);
  const steps = v.requireFace ? 4 : 3;
  const ussd = esc(ussdOf(v.enterpriseCode));
  const live = v.requireFace && v.liveness;
  // The liveness words the script needs, with the organisation's name already in them.
  const liveness = live ? { ...m.liveness, no_camera: fill(m.liveness.no_camera, { org: v.org }), no_more: fill(m.liveness.no_more, { org: v.org }) } : undefined;
  const data = { requireFace: v.requireFace, liveness, ussd: ussdOf(v.enterpriseCode), messages: { step_of: m.step_of, intro: { must_agree: m.intro.must_agree }, vnin: { invalid: m.vnin.invalid }, selfie: live ? undefined : m.selfie, send: m.send, result: { stopped_heading: m.result.stopped_heading }, errors: { network: m.errors.network }, help: { copied: m.help.copied, copy_failed: m.help.copy_failed, camera_denied: m.help.camera_denied } } };
  const selfie = live
    ? livenessStep()
    : v.requireFace
    ? `
<section id="step-selfie" aria-labelledby="h-selfie" hidden>
<h1 id="h-selfie" tabindex="-1">${esc(m.selfie.heading)}</h1>
<p>${esc(m.selfie.explain)}</p>
<div id="camera" hidden>
<video id="video" autoplay playsinline muted aria-label="${esc(m.selfie.camera_label)}"></video>
<button type="button" id="take">${esc(m.selfie.take)}</button>
</div>
<p id="camera-start"><button type="button" id="start-camera">${esc(m.selfie.start_camera)}</button></p>
<p class="file"><input type="file" id="file" name="selfie" accept="image/*" capture="user">
<label for="file" class="file-button">${esc(m.selfie.file_label)}</label></p>
<div id="preview" hidden>
<h2 id="h-preview" tabindex="-1">${esc(m.selfie.preview_heading)}</h2>
<img id="preview-img" alt="${esc(m.selfie.preview_alt)}">
<p class="actions"><button type="button" id="use">${esc(m.selfie.use)}</button>
<button type="button" id="retake" class="secondary">${esc(m.selfie.retake)}</button></p>
</div>
</section>`
    : '';
  return `${head(`${m.title}: ${v.org}`, v)}
<body>
<main>
<header>
<p class="org">${org}</p>
<p id="progress">${esc(fill(m.step_of, { n: 1, total: steps }))}</p>
</header>
<noscript><p class="error">${esc(m.noscript)}</p></noscript>
<p id="status" class="status" role="status" aria-live="polite"></p>
<p id="error" class="error" role="alert"></p>

<section id="step-consent" aria-labelledby="h-consent">
<h1 id="h-consent" tabindex="-1">${esc(fill(m.intro.heading, { org: v.org }))}</h1>
<p>${esc(fill(m.intro.purpose, { purpose: v.purpose }))}</p>
<p>${esc(fill(m.intro.reason, { reason: v.reasonLabel }))}</p>
<p>${esc(fill(m.intro.how, { org: v.org, face_how: live ? m.intro.liveness_how : v.requireFace ? m.intro.face_how : '' }))}</p>
<form id="consent-form" novalidate>
<h2>${esc(m.intro.consent_heading)}</h2>
<p id="consent-text" class="consent">${esc(consentText(v.org, v.purpose, v.requireFace))}</p>
<p class="check"><input type="checkbox" id="agree" name="agree" required aria-describedby="consent-text">
<label for="agree">${esc(m.intro.agree)}</label></p>
<button type="submit">${esc(m.intro.continue)}</button>
</form>
</section>

<section id="step-vnin" aria-labelledby="h-vnin" hidden>
<h1 id="h-vnin" tabindex="-1">${esc(m.vnin.heading)}</h1>
<p>${esc(fill(m.vnin.explain, { org: v.org }))}</p>
<p>${esc(m.vnin.ussd_intro)}</p>
<p class="ussd"><code>${ussd}</code></p>
<p class="hint">${esc(m.vnin.ussd_hint)}</p>
${vninHelp(v.org, v.supportContact)}
<p>${esc(fill(m.vnin.app, { code: v.enterpriseCode }))} <a href="${esc(m.vnin.app_url)}" target="_blank" rel="noopener noreferrer">${esc(m.vnin.app_link)}</a></p>
<form id="vnin-form" novalidate>
<label for="vnin">${esc(m.vnin.label)}</label>
<p id="vnin-hint" class="hint">${esc(m.vnin.hint)}</p>
<input id="vnin" name="vnin" autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="20" required aria-describedby="vnin-hint">
<button type="submit">${esc(m.vnin.continue)}</button>
</form>
</section>
${selfie}
<section id="step-send" aria-labelledby="h-send" hidden>
<h1 id="h-send" tabindex="-1">${esc(m.send.heading)}</h1>
<p>${esc(fill(m.send.explain, { org: v.org }))}</p>
<form id="send-form" novalidate>
<input type="hidden" name="csrf" value="${esc(v.csrf)}">
<p class="actions"><button type="submit" id="send">${esc(m.send.button)}</button>
<button type="button" id="back" class="secondary">${esc(m.send.back)}</button></p>
</form>
</section>

<section id="step-result" aria-labelledby="h-result" hidden>
<h1 id="h-result" tabindex="-1"></h1>
<p id="result-text"></p>
<p id="result-next"></p>
<p id="result-ref" class="hint"></p>
<p id="retry-line" hidden><button type="button" id="retry">${esc(m.help.retry)}</button></p>
</section>
<div id="kept" hidden>
<p id="kept-ref" class="hint"></p>
<p><a id="receipt-link" href="/">${esc(m.result.receipt)}</a></p>
</div>
<p id="contact" class="contact" hidden>${esc(helpText(v.org, v.supportContact))}</p>
</main>
<script type="application/json" id="page-data">${JSON.stringify(data).replace(/</g, '\\u003c')}</script>
</body>
</html>
`;
}

/**
 * The liveness check's step (in place of the selfie's): the camera behind an oval to place the face
 * in, and the prompt (a large arrow and words, read out as it changes), whose `data-liveness-step`
 * names the pose asked for; link.browser.js runs it. No file input: a chosen photo is not live.
 */
function livenessStep(): string {
  const l = MESSAGES.liveness;
  return `
<section id="step-selfie" aria-labelledby="h-selfie" hidden>
<h1 id="h-selfie" tabindex="-1">${esc(l.heading)}</h1>
<p id="liveness-explain">${esc(l.explain)}</p>
<div id="camera" class="liveness" hidden>
<div class="viewer">
<video id="video" autoplay playsinline muted aria-label="${esc(l.camera_label)}"></video>
<div class="oval" aria-hidden="true"></div>
</div>
<p id="liveness-prompt" class="prompt" aria-live="assertive" aria-atomic="true"><span id="prompt-arrow" class="arrow" aria-hidden="true"></span><span id="prompt-words"></span></p>
</div>
<p id="camera-start"><button type="button" id="start-camera" aria-describedby="liveness-explain">${esc(l.start)}</button></p>
</section>`;
}

/**
 * The page of a link that takes no more submissions (410) or never existed (404): says so (a suspended
 * link reads as withdrawn) and, when the organisation is known, what to do next: ask it for a new
 * link, through its support contact when it set one.
 */
export function renderGone(
  why: 'expired' | 'used_up' | 'revoked' | 'suspended' | 'not_found',
  v: { nonce: string; assets: { css: string }; org?: { name: string; supportContact: string | null } },
): string {
  const m = MESSAGES;
  const next = v.org ? `\n<p>${esc(fill(m.help.gone_next, { org: v.org.name }))}</p>${v.org.supportContact === null ? '' : `\n<p class="contact">${esc(helpText(v.org.name, v.org.supportContact))}</p>`}` : '';
  return `${head(m.gone.title, v)}
<body>
<main>
<h1>${esc(m.gone.title)}</h1>
<p>${esc(m.gone[why === 'suspended' ? 'revoked' : why])}</p>${next}
</main>
</body>
</html>
`;
}
