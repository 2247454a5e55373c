import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { OrgFixture, Stack } from './harness.ts';
import { waitFor } from './wait.ts';

// Verification links as the API tests and the browser tests drive them: make a link, read
// its page's CSRF token, submit as the page does, make a vNIN at the simulator, read the sandbox's
// webhook receiver.

export const FACES = 'src/simulators/identity-authority/faces/';
/** Grace Hopper's NIN at the identity simulator: a live record with her real portrait. */
export const HOPPER_NIN = '70000000001';

export type MadeLink = { id: string; url: string; status: string; uses: number; max_uses: number; expires_at: string; require_face: boolean; liveness: boolean; client_ref: string | null };

/**
 * A link as most tests drive it: with a face, a selfie (`liveness: false`) unless the body names
 * `liveness` (the API's default is a liveness check: test/links/link-liveness.test.ts).
 */
export async function makeLink(stack: Stack, token: string, body: Record<string, unknown> = {}): Promise<MadeLink> {
  const selfie = body.require_face === false || 'liveness' in body ? {} : { liveness: false };
  const r = await stack.api('POST', '/v1/verification-links', { token, json: { reason: 'corporate', purpose: 'Opening your savings account', ...selfie, ...body } });
  expect(r.status, r.text).toBe(201);
  return r.body as MadeLink;
}

/** The link's path on the stack (the URL's host may be the configured public one). */
export const pathOf = (url: string) => new URL(url).pathname;

/** The page's HTML, and the CSRF token of its send form. */
export async function openPage(stack: Stack, url: string): Promise<{ status: number; html: string; csrf: string | null; headers: Headers }> {
  const r = await fetch(`${stack.url}${pathOf(url)}`);
  const html = await r.text();
  return { status: r.status, html, csrf: /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? null, headers: r.headers };
}

/** POST /v/<token>/submit as the page's script sends it; `from` is the client address (TRUST_PROXY loopback). */
export async function submitPage(stack: Stack, url: string, body: Record<string, unknown>, o: { from?: string; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...o.headers };
  if (o.from) headers['x-forwarded-for'] = o.from;
  const r = await fetch(`${stack.url}${pathOf(url)}/submit`, { method: 'POST', headers, body: JSON.stringify({ consent: true, ...body }) });
  const text = await r.text();
  return { status: r.status, body: JSON.parse(text) as { detail: string; code?: string; step?: string }, headers: r.headers, text };
}

/** A fresh vNIN for a NIN, made the way the person's phone would (the simulator stands for NIMC). */
export async function sandboxVnin(stack: Stack, nin: string): Promise<string> {
  const r = await fetch(`${stack.identitySim.url}/sandbox/vnin`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ nin, enterprise_code: stack.config.nimcEnterpriseCode }) });
  expect(r.status).toBe(201);
  return ((await r.json()) as { vnin: string }).vnin;
}

export type Hook = { received_at: string; headers: Record<string, string>; body: string };

/** A receiver of its own at the simulator, registered for the link events. */
export async function linkReceiver(stack: Stack, org: OrgFixture) {
  const name = `i33-${randomBytes(5).toString('hex')}`;
  const url = `${stack.identitySim.url}/sandbox/hooks/${name}`;
  const r = await stack.api('POST', '/v1/webhook-endpoints', { token: org.admin.token, json: { url, events: ['verification_link.submitted'] } });
  expect(r.status, r.text).toBe(201);
  const received = async (): Promise<Hook[]> => ((await (await fetch(url)).json()) as { data: Hook[] }).data;
  return {
    secret: r.body.secret as string,
    received,
    /** The event that names this reference, once delivered. */
    async eventFor(referenceId: string) {
      const hook = await waitFor(async () => (await received()).find((h) => (JSON.parse(h.body) as { data: { reference_id?: string } }).data.reference_id === referenceId), {
        what: `verification_link.submitted for ${referenceId}`,
        timeoutMs: 20_000,
      });
      return { hook, event: JSON.parse(hook.body) as { id: string; type: string; data: Record<string, unknown> } };
    },
  };
}

/**
 * An address no other test of the run uses (a documentation IPv6 prefix and random bits). The bits are
 * in the /64 prefix: the link page's per-address limit counts a whole /64 as one address.
 */
export const ownAddress = () => `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}::1`;
