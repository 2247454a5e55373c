import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The only Redocly rules the served document is excused from, each with its reason (rule -> JSON
 * pointers it may not judge). `npm run lint:openapi` and the lint test both read it from here.
 */
export const LINT_EXCEPTIONS: Record<string, { pointer: string; why: string }[]> = {
  'operation-2xx-response': [{ pointer: '#/paths/~1team/post/responses', why: 'POST /team is retired: it answers 410 to everyone (users are added by invitation)' }],
};

/** The OpenAPI 3.0 rendering (/v1/openapi-3.0.json) is excused from the same rules, and from one more. */
export const LINT_EXCEPTIONS_30: typeof LINT_EXCEPTIONS = {
  ...LINT_EXCEPTIONS,
  'info-license-strict': [{ pointer: '#/info/license/url', why: "the licence is the operator's contract, with no public URL; 3.1 names it by an SPDX identifier, which 3.0 lacks" }],
};

const count = (e: typeof LINT_EXCEPTIONS) => Object.values(e).reduce((n, list) => n + list.length, 0);

/** The number of problems the exceptions excuse: a lint that ignores more has found something new. */
export const LINT_EXCEPTION_COUNT = count(LINT_EXCEPTIONS);
export const LINT_EXCEPTION_COUNT_30 = count(LINT_EXCEPTIONS_30);

/**
 * Writes Redocly's ignore file into `dir`, where Redocly must then run: the 3.1 exceptions for `file`
 * (a name), and for each of `more` (a name -> its exceptions) its own.
 */
export function writeLintIgnore(dir: string, file: string, more: Record<string, typeof LINT_EXCEPTIONS> = {}): void {
  const section = (name: string, exceptions: typeof LINT_EXCEPTIONS) =>
    `${name}:\n${Object.entries(exceptions)
      .map(([rule, list]) => `  ${rule}:\n${list.map((e) => `    - '${e.pointer}'`).join('\n')}`)
      .join('\n')}\n`;
  const sections = [section(file, LINT_EXCEPTIONS), ...Object.entries(more).map(([name, e]) => section(name, e))];
  writeFileSync(join(dir, '.redocly.lint-ignore.yaml'), sections.join(''));
}
