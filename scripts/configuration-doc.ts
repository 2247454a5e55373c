/**
 * The variable tables of docs/configuration.md, written from the schemas themselves: the production
 * settings (src/config.ts) and the sandbox's switches (src/sandbox-config.ts), one row per variable
 * with its name, its default and the description it carries in its schema (`.describe(...)`, or
 * `.meta({ description, documentedDefault })` when the literal default would mislead a reader: a
 * published development secret, a value derived from another variable). `npm run docs` writes them
 * between the marker comments; test/docs/configuration-doc.test.ts writes them again and fails when
 * the committed page differs. Adding a variable with a description is all a new setting needs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { configSchema, RENAMED } from '../src/config.ts';
import { sandboxSchema } from '../src/sandbox-config.ts';
import { between } from './architecture-graph.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const CONFIGURATION_MD = join(ROOT, 'docs/configuration.md');
export const TABLES_START = '<!-- configuration-tables:start (npm run docs writes them from the schemas; do not edit) -->';
export const TABLES_END = '<!-- configuration-tables:end -->';

export type Row = { name: string; default: string; description: string };

type Def = { type: string; defaultValue?: unknown; in?: z.ZodType; innerType?: z.ZodType };
const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The value a variable takes when it is unset, looked for through the wrappers zod puts around it. */
function defaultValue(schema: z.ZodType): { value: unknown } | undefined {
  const def = defOf(schema);
  if (def.type === 'default') return { value: def.defaultValue };
  if (def.type === 'pipe' && def.in) return defaultValue(def.in);
  return undefined;
}

function shownDefault(schema: z.ZodType): string {
  const documented = z.globalRegistry.get(schema)?.['documentedDefault'];
  if (typeof documented === 'string') return documented;
  const found = defaultValue(schema);
  const value = Array.isArray(found?.value) ? found.value.join(',') : found?.value;
  return value === undefined || value === '' ? 'empty' : `\`${String(value)}\``;
}

/** One row per variable of `schema`, in the schema's order; throws naming every variable without a description. */
export function rowsOf(schema: z.ZodObject): Row[] {
  const renamedTo = new Map<string, string[]>();
  for (const [old, current] of Object.entries(RENAMED)) renamedTo.set(current, [...(renamedTo.get(current) ?? []), old]);
  const missing: string[] = [];
  const rows = Object.entries(schema.shape).map(([name, field]) => {
    const described = z.globalRegistry.get(field as z.ZodType)?.description?.trim() ?? '';
    if (!described) missing.push(name);
    const oldNames = (renamedTo.get(name) ?? []).map((old) => ` Also read under its old name \`${old}\`, with a warning at start.`).join('');
    return { name, default: shownDefault(field as z.ZodType), description: described + oldNames };
  });
  if (missing.length > 0) throw new Error(`configuration variables without a description in their schema: ${missing.join(', ')}`);
  return rows;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

function table(rows: Row[]): string {
  return ['| variable | default | meaning |', '|---|---|---|', ...rows.map((r) => `| \`${r.name}\` | ${cell(r.default)} | ${cell(r.description)} |`)].join('\n');
}

/** What stands between the markers: the production settings, then the sandbox's switches. */
export function configurationTables(): string {
  return [
    '### Production settings',
    '',
    'The schema of `src/config.ts`, read by every process (API, workers, face workers, the CLI, `npm start`).',
    '',
    table(rowsOf(configSchema)),
    '',
    '### Sandbox switches',
    '',
    'The schema of `src/sandbox-config.ts`: the simulators, the mail sink, the demo seed and the benchmarks. Read only where the sandbox runs (a built-in simulator stands in for `IDENTITY_BASE_URL` or `PAYSTACK_BASE_URL`, or every upstream is a local one on a stack that is not real); a real stack never reads them, and refuses `LOOKUP_INLINE=true`.',
    '',
    table(rowsOf(sandboxSchema)),
  ].join('\n');
}

/** docs/configuration.md as it should read, given its current text. */
export function withTables(text: string): string {
  return between(text, TABLES_START, TABLES_END, configurationTables());
}

/** Writes the tables into docs/configuration.md; returns whether the file changed. */
export function writeConfigurationTables(): boolean {
  const text = readFileSync(CONFIGURATION_MD, 'utf8');
  const next = withTables(text);
  if (next !== text) writeFileSync(CONFIGURATION_MD, next);
  return next !== text;
}
