import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../setup/harness.ts';
import { ensurePortalBuilt } from '../e2e/portal-kit.ts';

// Browsers ask for /favicon.ico on every page; the pages a person opens name the same icon.

let stack: Stack;
beforeAll(async () => {
  ensurePortalBuilt();
  stack = await startStack({ workers: false });
});
afterAll(async () => stack?.close());

describe('the favicon', () => {
  it('When a browser asks for /favicon.ico, then it gets the committed icon (an ICO), cacheable, with no token', async () => {
    const r = await fetch(`${stack.url}/favicon.ico`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('image/x-icon');
    expect(r.headers.get('cache-control')).toBe('public, max-age=86400');
    const body = Buffer.from(await r.arrayBuffer());
    expect(body.equals(readFileSync('src/favicon/favicon.ico'))).toBe(true);
    // An ICO's header: reserved 0, type 1 (icon), and its images.
    expect([body.readUInt16LE(0), body.readUInt16LE(2), body.readUInt16LE(4)]).toEqual([0, 1, 2]);
  });

  it('When the portal, the documentation page or a link page is opened, then its head names /favicon.ico', async () => {
    const pages = ['/portal', '/docs/', `/v/${'A'.repeat(22)}`];
    for (const path of pages) {
      const html = await (await fetch(`${stack.url}${path}`)).text();
      expect(html, path).toMatch(/<link rel="icon" href="\/favicon\.ico" ?\/?>/);
    }
  });
});
