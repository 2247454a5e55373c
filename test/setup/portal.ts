import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { startStack, type OrgFixture, type Stack } from './harness.ts';
import { ensurePortalBuilt, launch, press, signInByKeyboard, WIDTHS } from '../e2e/portal-kit.ts';

// The portal's Settings page as its browser tests reach it: one stack (no workers) and one Chromium
// for the file; each test a new organisation whose administrator signs in with the keyboard.

export type PortalStack = { readonly stack: Stack; readonly browser: Browser };

/**
 * A stack without workers and a Chromium, made before the file's tests and closed after them. Call it
 * inside the `describe.skipIf(!hasChromium)` block, so a machine without Chromium starts neither;
 * read `stack` and `browser` in hooks and tests, not at the file's top level.
 */
export function usePortalStack(): PortalStack {
  let stack: Stack | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    ensurePortalBuilt();
    stack = await startStack({ workers: false });
    browser = await launch();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });
  return {
    get stack() {
      if (!stack) throw new Error('usePortalStack: the stack is made in beforeAll');
      return stack;
    },
    get browser() {
      if (!browser) throw new Error('usePortalStack: the browser is made in beforeAll');
      return browser;
    },
  };
}

/** A new organisation's administrator, signed in on a page of desktop width, on the Settings page. */
export async function openSettingsAsNewAdmin({ stack, browser }: PortalStack): Promise<{ org: OrgFixture; page: Page }> {
  const org = await stack.createOrg();
  const page = await (await browser.newContext({ viewport: { width: WIDTHS.desktop, height: 900 } })).newPage();
  await signInByKeyboard(page, stack.url, org.admin.username, org.admin.password);
  await press(page, page.getByRole('navigation').getByRole('link', { name: 'Settings' }));
  await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
  return { org, page };
}
