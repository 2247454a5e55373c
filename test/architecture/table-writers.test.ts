import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// Which module writes which table, read from the SQL itself: a statement that inserts into, updates
// or deletes from a table is found wherever it sits under src/ or workers/.

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.ts$/.test(name) ? [path] : [];
  });
}

/** `path: statement` for each write to one of `tables` in the given sources. */
export function writesTo(tables: string[], files: { path: string; text: string }[]): string[] {
  const write = new RegExp(`\\b(INSERT\\s+INTO|UPDATE|DELETE\\s+FROM|TRUNCATE(\\s+TABLE)?|MERGE\\s+INTO)\\s+(ONLY\\s+)?(public\\.)?"?(${tables.join('|')})"?(?![A-Za-z0-9_])`, 'gi');
  return files.flatMap(({ path, text }) => [...text.matchAll(write)].map((m) => `${path}: ${m[0].replace(/\s+/g, ' ')}`));
}

const sources = () => ['src', 'workers'].flatMap(sourceFiles).map((path) => ({ path, text: readFileSync(path, 'utf8') }));
const outside = (folder: string) => sources().filter(({ path }) => !path.startsWith(folder));

describe('a flow in one room', () => {
  it('the mail module has a door, and only src/modules/mail writes the outbox', () => {
    expect(existsSync('src/modules/mail/index.ts')).toBe(true);
    expect(writesTo(['outbox'], sources()).length).toBeGreaterThan(0);
    expect(writesTo(['outbox'], outside(join('src', 'modules', 'mail') + '/'))).toEqual([]);
  });

  it("only src/modules/mail queues an e-mail's delivery (outbox.deliver): the others call its deliverSoon", () => {
    const queues = (files: { path: string; text: string }[]) => files.filter(({ text }) => /enqueue(AndWait)?\(\s*'outbox\.deliver'/.test(text)).map(({ path }) => path);
    expect(queues(sources()).length).toBeGreaterThan(0);
    expect(queues(outside(join('src', 'modules', 'mail') + '/'))).toEqual([]);
  });

  it('only src/modules/wallet writes wallets, the ledger (wallet_transactions) and ledger_audits', () => {
    expect(writesTo(['wallets', 'wallet_transactions', 'ledger_audits'], sources()).length).toBeGreaterThan(0);
    expect(writesTo(['wallets', 'wallet_transactions', 'ledger_audits'], outside(join('src', 'modules', 'wallet') + '/'))).toEqual([]);
  });

  it('verification imports nothing from batches (batches consume verification, not the reverse)', () => {
    const verification = sources().filter(({ path }) => path.startsWith(join('src', 'modules', 'verification') + '/'));
    expect(verification.length).toBeGreaterThan(0);
    const imports = verification.flatMap(({ path, text }) => [...text.matchAll(/\bfrom\s+'([^']+)'|\bimport\(\s*'([^']+)'/g)].map((m) => `${path}: ${m[1] ?? m[2]}`));
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((i) => /modules\/batches\/|^[^:]+: \.\.\/batches\//.test(i))).toEqual([]);
  });

  it('the scan finds a write in any of its forms, and not a read or a longer name', () => {
    const found = writesTo(['wallets'], [
      { path: 'a.ts', text: 'sql`INSERT INTO wallets (org_id) VALUES (1)`' },
      { path: 'b.ts', text: 'sql`update\n  wallets SET balance = 0`' },
      { path: 'c.ts', text: 'sql`DELETE FROM public.wallets WHERE org_id = 1`' },
      { path: 'd.ts', text: 'sql`SELECT * FROM wallets JOIN wallet_transactions t ON true`; sql`INSERT INTO wallets_archive VALUES (1)`' },
    ]);
    expect(found).toEqual(['a.ts: INSERT INTO wallets', 'b.ts: update wallets', 'c.ts: DELETE FROM public.wallets']);
  });
});
