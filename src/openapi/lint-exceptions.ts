import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The only Redocly rules the served document is excused from, each with its reason (rule -> JSON
 * pointers it may not judge). `npm run lint:openapi` and the lint test both read it from here.
 */
export const LINT_EXCEPTIONS: Record<string, { pointer: string; why: string }[]> = {
  'operation-2xx-response': [{ pointer: '#/paths/~1team/post/responses', why: 'POST /team is retired: it answers 410 to everyone (users are added by invitation)' }],
};

/** The number of problems the exceptions excuse: a lint that ignores more has found something new. */
export const LINT_EXCEPTION_COUNT = Object.values(LINT_EXCEPTIONS).reduce((n, list) => n + list.length, 0);

/** Writes Redocly's ignore file for `file` (a name) into `dir`, where Redocly must then run. */
export function writeLintIgnore(dir: string, file: string): void {
  const rules = Object.entries(LINT_EXCEPTIONS).map(([rule, list]) => `  ${rule}:\n${list.map((e) => `    - '${e.pointer}'`).join('\n')}`);
  writeFileSync(join(dir, '.redocly.lint-ignore.yaml'), `${file}:\n${rules.join('\n')}\n`);
}
