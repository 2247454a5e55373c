import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensurePortalBuilt } from '../e2e/portal-kit.ts';

// The portal names the API's answers with the types clients/typescript generates from the OpenAPI
// document (portal/src/api.ts re-exports them as `Schemas`), so a change to the document reaches the
// pages through the typecheck instead of drifting from a copy.

const walk = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));

/** The portal's own routes, in no OpenAPI document: their answers are declared where they are called. */
const PORTAL_ONLY = [/'\/login'/];

describe('the portal and the generated client', () => {
  it("When a portal page reads an API answer, then its type is the generated client's, not an object type written in the call", () => {
    const written: string[] = [];
    for (const file of walk('portal/src').filter((f) => /\.tsx?$/.test(f))) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (/\b(get|call)<\s*\{/.test(line) && !PORTAL_ONLY.some((r) => r.test(line))) written.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(written).toEqual([]);
  });

  it('When the portal is built, then nothing of the client is in its script (the types are imported as types only)', () => {
    ensurePortalBuilt();
    const scripts = readdirSync('portal/dist/assets').filter((f) => f.endsWith('.js'));
    expect(scripts.length).toBeGreaterThan(0);
    // Operation ids of the client's table (clients/typescript/src/operations.ts) and a function of its
    // webhooks helper: names the portal never writes itself.
    for (const name of scripts) {
      const text = readFileSync(join('portal/dist/assets', name), 'utf8');
      expect(text).not.toMatch(/getMeOrganisation|listApiClients|verifyStandardWebhook/);
    }
  });
});
