/**
 * The house map of docs/architecture.md, drawn from the imports: dependency-cruiser reads src/ and
 * workers/ with the rules' own options (`.dependency-cruiser.cjs`, as `npm run lint:deps` does), and the
 * files are collapsed to the folders a reader thinks in. Two Mermaid graphs come out: the modules and
 * which doors each one imports, and the layers (start-up files, workers, modules, adapters, lib...).
 * `npm run docs` writes them between the marker comments of docs/architecture.md;
 * test/docs/architecture-graph.test.ts draws them again and fails when the committed ones differ.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const ARCHITECTURE_MD = join(ROOT, 'docs/architecture.md');
export const MODULES_START = '<!-- module-graph:start (npm run docs draws it from the imports; do not edit) -->';
export const MODULES_END = '<!-- module-graph:end -->';
export const LAYERS_START = '<!-- layer-graph:start (npm run docs draws it from the imports; do not edit) -->';
export const LAYERS_END = '<!-- layer-graph:end -->';

/** One import between two files of src/ or workers/, as dependency-cruiser resolved it. */
export type Edge = { from: string; to: string };

/** Every import between files of src/ and workers/ (packages and Node's own modules left out). */
export async function importsOf(root = ROOT): Promise<Edge[]> {
  // Run by this process's own Node (the one `npm run` and vitest chose), not whatever `node` is on PATH.
  const depcruise = join(ROOT, 'node_modules/.bin/depcruise');
  const { stdout } = await promisify(execFile)(process.execPath, [depcruise, '--config', '.dependency-cruiser.cjs', '--output-type', 'json', 'src', 'workers'], {
    cwd: root,
    maxBuffer: 256 * 1024 * 1024,
  });
  const result = JSON.parse(stdout) as { modules: { source: string; dependencies: { resolved: string }[] }[] };
  return result.modules.flatMap((m) => m.dependencies.map((d) => ({ from: m.source, to: d.resolved })))
    .filter((e) => /^(src|workers)\//.test(e.from) && /^(src|workers)\//.test(e.to));
}

/** The module a file belongs to (`src/modules/<m>/...`), or undefined. */
export function moduleOf(path: string): string | undefined {
  return /^src\/modules\/([^/]+)\//.exec(path)?.[1];
}

/**
 * The box a file belongs to in the layers graph, named by its folder: each adapter and simulator keeps
 * its own box, as does workers/processors; a file directly in src/ or workers/ (start-up, configuration,
 * the context a route receives) is a box of its own, since each of them sits at its own level.
 */
export function layerOf(path: string): string {
  const parts = path.split('/');
  if (parts.length === 2) return path;
  if (parts[0] === 'workers') return `workers/${parts[1]}`;
  if ((parts[1] === 'adapters' || parts[1] === 'simulators') && parts.length > 3) return `src/${parts[1]}/${parts[2]}`;
  return `src/${parts[1]}`;
}

/** Arrows between the boxes `group` puts files in (a box's own imports left out), sorted. */
export function collapse(edges: Edge[], group: (path: string) => string | undefined): Map<string, string[]> {
  const arrows = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    const a = group(from);
    const b = group(to);
    if (a === undefined || b === undefined || a === b) continue;
    if (!arrows.has(a)) arrows.set(a, new Set());
    arrows.get(a)!.add(b);
  }
  return new Map([...arrows].sort(([a], [b]) => a.localeCompare(b)).map(([a, to]) => [a, [...to].sort()]));
}

const id = (name: string) => name.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '');

/**
 * A Mermaid flowchart: the boxes whose name is not a plain identifier declared first with their label,
 * then one line per box with arrows (`a --> b & c`), then the boxes with none.
 */
export function mermaid(boxes: string[], arrows: Map<string, string[]>): string {
  const all = [...new Set([...boxes, ...[...arrows].flatMap(([from, to]) => [from, ...to])])].sort();
  const labels = all.filter((box) => id(box) !== box).map((box) => `  ${id(box)}["${box}"]`);
  const lines = [...arrows].map(([from, to]) => `  ${id(from)} --> ${to.map(id).join(' & ')}`);
  const drawn = new Set([...arrows].flatMap(([from, to]) => [from, ...to]));
  const alone = all.filter((box) => !drawn.has(box)).map((box) => `  ${id(box)}`);
  return ['```mermaid', 'flowchart LR', ...labels, ...lines, ...alone, '```'].join('\n');
}

/** Every folder of src/modules/. */
export function moduleNames(root = ROOT): string[] {
  return readdirSync(join(root, 'src/modules'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
}

/** The two graphs, drawn from the imports. */
export async function drawGraphs(root = ROOT): Promise<{ modules: string; layers: string }> {
  const edges = await importsOf(root);
  const modules = mermaid(moduleNames(root), collapse(edges, moduleOf));
  const layers = mermaid(edges.flatMap((e) => [layerOf(e.from), layerOf(e.to)]), collapse(edges, layerOf));
  return { modules, layers };
}

/** `text` with what stands between `start` and `end` replaced by `body`; throws when a marker is missing. */
export function between(text: string, start: string, end: string, body: string): string {
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  if (a < 0 || b < a) throw new Error(`docs/architecture.md lacks the markers ${start} ... ${end}`);
  return `${text.slice(0, a + start.length)}\n${body}\n${text.slice(b)}`;
}

/** docs/architecture.md as it should read, given its current text and the drawn graphs. */
export function withGraphs(text: string, graphs: { modules: string; layers: string }): string {
  return between(between(text, MODULES_START, MODULES_END, graphs.modules), LAYERS_START, LAYERS_END, graphs.layers);
}

/** Draws both graphs into docs/architecture.md; returns whether the file changed. */
export async function writeArchitectureGraphs(): Promise<boolean> {
  const text = readFileSync(ARCHITECTURE_MD, 'utf8');
  const next = withGraphs(text, await drawGraphs());
  if (next !== text) writeFileSync(ARCHITECTURE_MD, next);
  return next !== text;
}
