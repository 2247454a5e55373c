import { randomInt } from 'node:crypto';
import express, { Router, type Request, type Response } from 'express';
import { z } from 'zod';

/**
 * Virtual NINs as NIMC issues and checks them. `POST /sandbox/vnin` stands for the person's phone
 * (USSD or NIMC's app), so it needs no API key. Tokens live in this process's memory only and are
 * never logged; README.md in this folder lists the rules and each dialect's refusal messages.
 */
export const VNIN_VALIDITY_MS = 72 * 3600 * 1000;

export type VninRefusal = 'not_found' | 'expired' | 'wrong_enterprise' | 'used';

type Issued = { nin: string; enterpriseCode: string; issuedAt: number; used: boolean };

export interface VninStore {
  /** The NIN a token stands for, or why it is refused. `use()` marks it used once found. */
  check(token: string, now: number): { nin: string; use(): void } | { refused: VninRefusal };
  routes(): Router;
}

const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** Two letters, 12 digits, two letters, as NIMC's tokens read (e.g. AB012345678910YZ). */
function newToken(): string {
  const letter = () => LETTERS[randomInt(26)]!;
  let digits = '';
  for (let i = 0; i < 12; i++) digits += String(randomInt(10));
  return `${letter()}${letter()}${digits}${letter()}${letter()}`;
}

const issueBody = z.object({
  nin: z.string().regex(/^\d{11}$/),
  enterprise_code: z.string().regex(/^\d{4,10}$/),
  issued_at: z.iso.datetime({ offset: true }).optional(),
});

export function createVninStore(o: { enterpriseCode: () => string }): VninStore {
  const issued = new Map<string, Issued>();

  return {
    check(token, now) {
      const entry = issued.get(token.toUpperCase());
      if (!entry) return { refused: 'not_found' };
      if (entry.used) return { refused: 'used' };
      if (now - entry.issuedAt >= VNIN_VALIDITY_MS) return { refused: 'expired' };
      if (entry.enterpriseCode !== o.enterpriseCode()) return { refused: 'wrong_enterprise' };
      return { nin: entry.nin, use: () => void (entry.used = true) };
    },
    routes() {
      const router = Router();
      router.post('/sandbox/vnin', express.json({ limit: '4kb' }), (req: Request, res: Response) => {
        const body = issueBody.safeParse(req.body);
        // Field names only, as every simulator message: the values are personal data.
        if (!body.success) return void res.status(400).json({ status: false, message: `Invalid request: ${[...new Set(body.error.issues.map((i) => i.path.join('.') || 'body'))].join(', ')}` });
        const issuedAt = body.data.issued_at ? Date.parse(body.data.issued_at) : Date.now();
        if (issuedAt > Date.now() + 60_000) return void res.status(400).json({ status: false, message: 'Invalid request: issued_at' });
        // Only people who exist get a token (NINs starting with 0 do not exist).
        if (body.data.nin.startsWith('0')) return void res.status(404).json({ status: false, message: 'NIN not found' });
        let token = newToken();
        while (issued.has(token)) token = newToken();
        issued.set(token, { nin: body.data.nin, enterpriseCode: body.data.enterprise_code, issuedAt, used: false });
        res.status(201).json({ vnin: token, expires_at: new Date(issuedAt + VNIN_VALIDITY_MS).toISOString() });
      });
      return router;
    },
  };
}
