import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
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
 * No serious or critical violation is allowed.
 */
export async function checkPage(page: Page, name: string, width: number, o: { height?: number; dir?: string; file?: string } = {}): Promise<void> {
  await page.setViewportSize({ width, height: o.height ?? 900 });
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const r = await (globalThis as unknown as { axe: { run(o: unknown): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe.run({ resultTypes: ['violations'] });
    return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
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
