/**
 * docs/configuration.md's variable tables are written from the schemas by `npm run docs`
 * (scripts/configuration-doc.ts): the production settings of src/config.ts and the sandbox's switches of
 * src/sandbox-config.ts, each variable with its default and the description it carries in its schema.
 * These tests write them again and fail when the committed page differs, and when a variable has no
 * description to write.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { configSchema, RENAMED } from '../../src/config.ts';
import { csv } from '../../src/lib/env-values.ts';
import { sandboxSchema } from '../../src/sandbox-config.ts';
import { CONFIGURATION_MD, rowsOf, TABLES_END, TABLES_START, withTables } from '../../scripts/configuration-doc.ts';

/** Variables named in the first cell of a table row of the page. */
function documented(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => [...(line.split('|')[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!));
}

describe('docs/configuration.md is written from the configuration schemas', () => {
  it('When the tables are written again from the schemas, then they equal the committed page (else: npm run docs)', () => {
    const committed = readFileSync(CONFIGURATION_MD, 'utf8');
    expect(withTables(committed), 'docs/configuration.md is stale: run `npm run docs` and commit it').toBe(committed);
  });

  it('When the page is read, then it has one row per variable of both schemas, production first, and names every old name still read', () => {
    const text = readFileSync(CONFIGURATION_MD, 'utf8');
    const production = Object.keys(configSchema.shape);
    const sandbox = Object.keys(sandboxSchema.shape);
    expect(production.length).toBeGreaterThan(50);
    expect(production.filter((name) => sandbox.includes(name))).toEqual([]);
    expect(documented(text)).toEqual([...production, ...sandbox]);
    const tables = text.slice(text.indexOf(TABLES_START), text.indexOf(TABLES_END));
    for (const old of Object.keys(RENAMED)) expect(tables).toContain(`\`${old}\``);
  });

  it('When a variable carries no description, then writing the tables fails naming it; defaults are shown as a reader sets them', () => {
    const schema = z.object({
      PLAIN: z.coerce.number().int().default(6 * 1000).describe('a number'),
      EMPTY: z.string().default('').describe('a string'),
      LIST: csv.default([]).describe('a list'),
      PIPED: z.string().default('[1]').transform((v) => JSON.parse(v) as number[]).describe('a parsed value'),
      SECRET: z.string().default('dev-secret').meta({ description: 'a key', documentedDefault: 'development value' }),
      UNSET: z.string().optional().describe('optional | with a pipe'),
    });
    expect(rowsOf(schema)).toEqual([
      { name: 'PLAIN', default: '`6000`', description: 'a number' },
      { name: 'EMPTY', default: 'empty', description: 'a string' },
      { name: 'LIST', default: 'empty', description: 'a list' },
      { name: 'PIPED', default: '`[1]`', description: 'a parsed value' },
      { name: 'SECRET', default: 'development value', description: 'a key' },
      { name: 'UNSET', default: 'empty', description: 'optional | with a pipe' },
    ]);
    const undescribed = z.object({ DESCRIBED: z.string().default('x').describe('fine'), NEW_LIMIT: z.coerce.number().default(5), OTHER: z.string().optional() });
    expect(() => rowsOf(undescribed)).toThrow('configuration variables without a description in their schema: NEW_LIMIT, OTHER');
  });
});
