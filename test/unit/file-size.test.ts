import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// A file answers one question: past 300 lines it is answering several. The check names every file
// over the line so the split happens when the file is touched, not in a later clean-up.
const LIMIT = 300;
const ROOTS = ['src', 'workers'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx|js|mjs|cjs)$/.test(name) ? [path] : [];
  });
}

export function linesOf(text: string): number {
  return text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
}

describe('source file size', () => {
  it(`When the sources are read, then no file under src/ or workers/ has more than ${LIMIT} lines`, () => {
    const files = ROOTS.flatMap(sourceFiles);
    expect(files.length).toBeGreaterThan(50);
    const over = files.map((f) => ({ f, n: linesOf(readFileSync(f, 'utf8')) })).filter(({ n }) => n > LIMIT).map(({ f, n }) => `${f} (${n} lines)`);
    expect(over).toEqual([]);
  });

  it('When a file has 301 lines, then the count says so (the check can fail)', () => {
    expect(linesOf('x\n'.repeat(301))).toBe(301);
    expect(linesOf('x\n'.repeat(300) + 'y')).toBe(301);
  });
});
