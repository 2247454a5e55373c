import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// Principals live in one place that auth reads: src/modules/organisations/principals.ts holds the rows
// and the queries that turn a token, a session or a credential into a user or an API client. What marks
// such a read is a column only authentication needs: the token version (is this token still its
// subject's?) and the credentials (a password's hash, an API client's secret's digest). So no SQL
// elsewhere in src/ or workers/ may read one of them; writing them (a new password, a rotated secret, a
// bumped version) stays with the code that changes them.

const HOME = ['src', 'modules', 'organisations', 'principals.ts'].join('/');
const COLUMNS = ['token_version', 'password_hash', 'secret_hash'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.ts$/.test(name) ? [path] : [];
  });
}

/** The SQL text of each `sql.<tag>` template of a file (an interpolation reads as `$`). */
export function sqlTemplates(path: string, text: string): string[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isTaggedTemplateExpression(node) && /^sql\s*\./.test(node.tag.getText(source))) {
      const t = node.template;
      found.push(ts.isNoSubstitutionTemplateLiteral(t) ? t.text : t.head.text + t.templateSpans.map((s) => `$${s.literal.text}`).join(''));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * The columns a statement (or fragment) reads, of `columns`: in a statement that writes, those named in
 * a SELECT list or a RETURNING list; in one that does not (a query, or a fragment that may become a
 * select list), every one it names.
 */
export function columnsRead(columns: string[], statement: string): string[] {
  const named = (text: string) => columns.filter((c) => new RegExp(`(?<![A-Za-z0-9_])${c}(?![A-Za-z0-9_])`, 'i').test(text));
  if (!/\b(INSERT|UPDATE|DELETE|MERGE)\b/i.test(statement)) return named(statement);
  const lists = [...statement.matchAll(/\bSELECT\b([\s\S]*?)(?=\bFROM\b|$)|\bRETURNING\b([\s\S]*?)(?=;|$)/gi)].map((m) => m[1] ?? m[2] ?? '');
  return [...new Set(lists.flatMap(named))];
}

/** `path: column` for each read of `columns` in the given sources. */
export function readsOf(columns: string[], files: { path: string; text: string }[]): string[] {
  return files.flatMap(({ path, text }) => sqlTemplates(path, text).flatMap((s) => columnsRead(columns, s).map((c) => `${path}: ${c}`)));
}

const sources = () =>
  ['src', 'workers'].flatMap(sourceFiles).map((path) => ({ path: path.split(sep).join('/'), text: readFileSync(path, 'utf8') }));

describe('principals live in one place that auth reads', () => {
  it('only organisations/principals.ts reads a token version or a credential (token_version, password_hash, secret_hash) in SQL', () => {
    const all = sources();
    const home = all.filter((f) => f.path === HOME);
    expect(home.map((f) => f.path)).toEqual([HOME]);
    // Each column is read there (the scan sees the principal queries), and nowhere else.
    expect(new Set(readsOf(COLUMNS, home).map((r) => r.split(': ')[1]))).toEqual(new Set(COLUMNS));
    expect(readsOf(COLUMNS, all.filter((f) => f.path !== HOME))).toEqual([]);
  });

  it('the scan finds a read in a query, a fragment or a RETURNING list, and not a write, a longer name or code outside SQL', () => {
    const found = readsOf(COLUMNS, [
      { path: 'a.ts', text: 'db.one(sql.type(row)`SELECT u.id, u.token_version FROM users u WHERE u.id = ${id}`)' },
      { path: 'b.ts', text: 'const columns = sql.fragment`id, client_id, secret_hash`;' },
      { path: 'c.ts', text: 'sql.unsafe`UPDATE users SET disabled = true WHERE id = ${id} RETURNING id, password_hash`' },
      { path: 'd.ts', text: 'sql.prepared(`n`, row)`SELECT x FROM (SELECT c.token_version FROM api_clients c) y`' },
      {
        path: 'e.ts',
        text: [
          'sql.unsafe`UPDATE users SET password_hash = ${hash}, must_change_password = false WHERE id = ${id}`;',
          'sql.type(row)`INSERT INTO api_clients (client_id, secret_hash) VALUES (${a}, ${b}) RETURNING id, client_id`;',
          'sql.type(row)`UPDATE api_clients SET secret_hash = ${b}, token_version = token_version + 1 WHERE id = ${id} RETURNING id`;',
          'sql.fragment`-- the users_token_version trigger`;',
          'const v = user.token_version; // token_version outside SQL',
        ].join('\n'),
      },
    ]);
    expect(found).toEqual(['a.ts: token_version', 'b.ts: secret_hash', 'c.ts: password_hash', 'd.ts: token_version']);
  });
});
