import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ARCHITECTURE_MD, between, collapse, drawGraphs, layerOf, LAYERS_END, LAYERS_START, mermaid, moduleNames, moduleOf,
  MODULES_END, MODULES_START, withGraphs,
} from '../../scripts/architecture-graph.ts';

// docs/architecture.md's house map is drawn from the imports by `npm run docs`; a map drawn by hand
// drifts (it once lacked a module and several arrows). These tests draw it again and compare.

/** The lines of the layout block's modules/ list: `    <name>/   what it holds`. */
function layoutModules(text: string): string[] {
  const block = /```\nsrc\/\n([\s\S]*?)```/.exec(text)?.[1];
  expect(block, 'docs/architecture.md has a layout block starting with src/').toBeDefined();
  return [...block!.matchAll(/^ {4}([a-z0-9-]+)\/ /gm)].map((m) => m[1]!);
}

describe('the house map of docs/architecture.md', () => {
  it('When the graphs are drawn again from the imports, then they equal the committed ones (else: npm run docs)', { timeout: 120_000 }, async () => {
    const committed = readFileSync(ARCHITECTURE_MD, 'utf8');
    const drawn = withGraphs(committed, await drawGraphs());
    expect(drawn, 'the module or layer graph of docs/architecture.md is stale: run `npm run docs` and commit it').toBe(committed);
  });

  it('When src/modules is listed, then the layout block names every module folder, and no other', () => {
    expect(layoutModules(readFileSync(ARCHITECTURE_MD, 'utf8'))).toEqual(moduleNames());
  });

  it('When a file of one module imports another module, then one arrow is drawn between the two boxes; imports inside a box draw none', () => {
    const edges = [
      { from: 'src/modules/links/link-run.ts', to: 'src/modules/verification/index.ts' },
      { from: 'src/modules/links/routes.ts', to: 'src/modules/verification/index.ts' },
      { from: 'src/modules/links/routes.ts', to: 'src/modules/links/link-run.ts' },
      { from: 'src/modules/links/routes.ts', to: 'src/lib/http.ts' },
    ];
    expect([...collapse(edges, moduleOf)]).toEqual([['links', ['verification']]]);
    expect(mermaid(['audit', 'links', 'verification'], collapse(edges, moduleOf))).toBe(
      '```mermaid\nflowchart LR\n  links --> verification\n  audit\n```',
    );
  });

  it('When files are put in layers, then each folder of src/ is a box, adapters and simulators one each, and a file directly in src/ or workers/ its own', () => {
    expect(layerOf('src/modules/wallet/holds.ts')).toBe('src/modules');
    expect(layerOf('src/adapters/identity-authority/dojah.ts')).toBe('src/adapters/identity-authority');
    expect(layerOf('src/simulators/mail-sink/main.ts')).toBe('src/simulators/mail-sink');
    expect(layerOf('src/lib/db.ts')).toBe('src/lib');
    expect(layerOf('src/config.ts')).toBe('src/config.ts');
    expect(layerOf('workers/processors/topup.ts')).toBe('workers/processors');
    expect(layerOf('workers/main.ts')).toBe('workers/main.ts');
    expect(mermaid([], new Map([['src/app.ts', ['src/lib']]]))).toBe(
      '```mermaid\nflowchart LR\n  src_app_ts["src/app.ts"]\n  src_lib["src/lib"]\n  src_app_ts --> src_lib\n```',
    );
  });

  it('When a committed graph differs from the drawn one, or its markers are gone, then the comparison sees it', () => {
    const text = readFileSync(ARCHITECTURE_MD, 'utf8');
    expect(withGraphs(text, { modules: '```mermaid\nflowchart LR\n  a --> b\n```', layers: '' })).not.toBe(text);
    expect(() => between('no markers here', MODULES_START, MODULES_END, 'x')).toThrow(/lacks the markers/);
    expect(text.indexOf(LAYERS_START)).toBeGreaterThan(text.indexOf(MODULES_END));
  });
});
