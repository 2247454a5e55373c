import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { expect } from 'vitest';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
export const SCREENSHOTS = 'docs/portal';
export const WIDTHS = { phone: 360, desktop: 1440 } as const;

/** The portal as `npm ci` builds it; built here when a checkout has not been through `npm ci` yet. */
export function ensurePortalBuilt(): void {
  if (existsSync('portal/dist/index.html')) return;
  const r = spawnSync(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--config', 'portal/vite.config.ts'], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error('portal build failed');
}

/** `extraArgs`: more Chromium switches (a fake camera, say). */
export async function launch(extraArgs: readonly string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', ...extraArgs],
  });
}

export async function signIn(page: Page, base: string, username: string, password: string, otp?: () => string): Promise<void> {
  await page.goto(`${base}/portal`);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  if (otp) {
    await page.getByLabel('One-time code').fill(otp());
    await page.getByRole('button', { name: 'Sign in' }).click();
  }
  await page.getByRole('navigation').getByRole('link', { name: 'Overview' }).waitFor();
}

const AXE = readFileSync('node_modules/axe-core/axe.min.js', 'utf8');

/**
 * axe-core inside the page (evaluated over the DevTools protocol, which the page's CSP does not
 * govern), then a screenshot at the given width (into `o.dir`, `<name>-<width>.png`; or `o.file`).
 * No serious or critical violation is allowed (with `o.anyImpact`, no violation at all).
 */
export async function checkPage(page: Page, name: string, width: number, o: { height?: number; dir?: string; file?: string; anyImpact?: boolean } = {}): Promise<void> {
  await page.setViewportSize({ width, height: o.height ?? 900 });
  await page.evaluate(AXE);
  const anyImpact = o.anyImpact === true;
  const violations = await page.evaluate(async (anyImpact) => {
    const r = await (globalThis as unknown as { axe: { run(o: unknown): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe.run({ resultTypes: ['violations'] });
    return r.violations.filter((v) => anyImpact || v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  }, anyImpact);
  expect(violations, `${name} at ${width}px`).toEqual([]);
  // Evaluated in the page: written as text, since this file is compiled without the DOM library.
  const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
  expect(overflow, `${name} at ${width}px scrolls sideways`).toBeLessThanOrEqual(0);
  const dir = o.dir ?? SCREENSHOTS;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: `${dir}/${o.file ?? `${name}-${width}`}.png`, fullPage: true });
}

/** RFC 6238 (SHA-1, 6 digits, 30 s) for the test's own authenticator. */
export function totp(base32Secret: string, at = Date.now(), stepOffset = 0): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const c of base32Secret.replace(/=+$/, '').toUpperCase()) bits += alphabet.indexOf(c).toString(2).padStart(5, '0');
  const key = Buffer.from(bits.match(/.{8}/g)!.map((b) => parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(at / 30_000) + stepOffset));
  const h = createHmac('sha1', key).update(counter).digest();
  const o = h[h.length - 1]! & 0xf;
  return String((h.readUInt32BE(o) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

// Keyboard only: the focus is moved with Tab (Shift+Tab) and controls are used with Enter, Space and
// typing, as a person without a mouse does.
// Runs in the page; typed loosely, since this file is compiled without the DOM library.
const HAS_FOCUS = (el: unknown) => el === (el as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement;

/** Presses Tab (Shift+Tab with `back`) until `target` has the focus; fails after `max` presses. */
export async function tabTo(page: Page, target: Locator, o: { back?: boolean; max?: number } = {}): Promise<void> {
  for (let i = 0; i < (o.max ?? 120); i++) {
    if ((await target.evaluate(HAS_FOCUS)) === true) return;
    await page.keyboard.press(o.back ? 'Shift+Tab' : 'Tab');
  }
  throw new Error(`Tab never reached ${target.toString()}`);
}

/** Tabs to `target` and presses `key` on it (Enter for links and buttons, Space for buttons and checkboxes). */
export async function press(page: Page, target: Locator, key = 'Enter'): Promise<void> {
  await tabTo(page, target);
  await page.keyboard.press(key);
}

/** Tabs to a text field and types `text` in place of what it held. */
export async function typeIn(page: Page, field: Locator, text: string): Promise<void> {
  await tabTo(page, field);
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('Backspace');
  await page.keyboard.type(text);
}

/** Whether `target` has the focus now. */
export const hasFocus = async (target: Locator): Promise<boolean> => (await target.evaluate(HAS_FOCUS)) === true;

/** Signs in with the keyboard only: Tab to each field, type, Enter. */
export async function signInByKeyboard(page: Page, base: string, username: string, password: string): Promise<void> {
  await page.goto(`${base}/portal`);
  await typeIn(page, page.getByLabel('Username'), username);
  await typeIn(page, page.getByLabel('Password'), password);
  await page.keyboard.press('Enter');
  await page.getByRole('navigation').getByRole('link', { name: 'Overview' }).waitFor();
}
