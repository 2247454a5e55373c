/**
 * docs/configuration.md documents every variable the configuration schema reads. The
 * schema (src/config.ts, with its value parsers in src/config-*.ts) is the one list; this test reads its
 * keys and fails when one has no row of its own in the configuration tables (named in a row's first
 * cell), and when a row names a variable the schema no longer reads.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { configSchema } from '../../src/config.ts';

/** The keys of the configuration schema, whatever wraps the object (refinements, a pipe). */
function schemaKeys(schema: z.ZodType): string[] {
  const def = (schema as unknown as { _zod: { def: { shape?: Record<string, unknown>; in?: z.ZodType; innerType?: z.ZodType; schema?: z.ZodType } } })._zod.def;
  if (def.shape) return Object.keys(def.shape);
  const inner = def.in ?? def.innerType ?? def.schema;
  if (!inner) throw new Error('the configuration schema is not an object');
  return schemaKeys(inner);
}

/** Old names still read beside their new ones (src/config*.ts `RENAMED = { OLD: 'NEW' }`). */
function renamedKeys(): string[] {
  const sources = [readFileSync('src/config.ts', 'utf8')];
  return sources.flatMap((s) => [...(/RENAMED\s*=\s*\{([^}]*)\}/.exec(s)?.[1] ?? '').matchAll(/([A-Z][A-Z0-9_]+)\s*:/g)].map((m) => m[1]!));
}

/** Variables named in the first cell of a table row of docs/configuration.md. */
function documented(): Set<string> {
  const names = new Set<string>();
  for (const line of readFileSync('docs/configuration.md', 'utf8').split('\n')) {
    if (!line.startsWith('|') || /^\|[\s|:-]+\|?$/.test(line)) continue;
    const firstCell = line.split('|')[1] ?? '';
    for (const [, name] of firstCell.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) names.add(name!);
  }
  return names;
}

describe('docs/configuration.md documents every configuration variable', () => {
  it('every key of the configuration schema has a row in docs/configuration.md', () => {
    const keys = schemaKeys(configSchema as unknown as z.ZodType);
    expect(keys.length).toBeGreaterThan(50);
    const docs = documented();
    expect(keys.filter((k) => !docs.has(k))).toEqual([]);
  });

  it('every old name still read is documented, and no row names a variable nobody reads', () => {
    const docs = documented();
    const renamed = renamedKeys();
    expect(renamed.filter((k) => !readFileSync('docs/configuration.md', 'utf8').includes(`\`${k}\``))).toEqual([]);
    const read = new Set([...schemaKeys(configSchema as unknown as z.ZodType), ...renamed]);
    expect([...docs].filter((k) => !read.has(k))).toEqual([]);
  });
});
