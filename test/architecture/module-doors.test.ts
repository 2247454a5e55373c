import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A module's door (src/modules/<m>/index.ts) exports what code outside the module uses, no more: a
// name on the door is a promise to keep, and a door that lists everything shuts nothing. The callers
// are the files of src/ and workers/ outside the module; tests are not (a test may import a module's
// internal file directly). The door's names come from the compiler, so `export *` counts as the names
// it re-exports; a caller's names come from its import and re-export statements, its `ns.name` uses of
// an `import * as ns`, its `(await import(door)).name` and its `import(door).Type`.

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const CALLER_ROOTS = ['src', 'workers'];
const DOOR = /^src\/modules\/([^/]+)\/index\.ts$/;

function sourceFiles(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.ts$/.test(name) && !/\.d\.ts$/.test(name) ? [path] : [];
  });
}

const posix = (path: string) => path.split(sep).join('/');

/** What one caller file takes from each door it imports: names, every name (`all`), or uses it cannot tell. */
export interface CallerUses {
  names: Map<string, Set<string>>;
  all: Set<string>;
  unclear: string[];
}

/** The names `file` imports from modules, keyed by the absolute path its specifiers resolve to. */
export function usesOf(file: string, text: string, root = REPO): CallerUses {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const uses: CallerUses = { names: new Map(), all: new Set(), unclear: [] };
  const target = (specifier: string) => (specifier.startsWith('.') ? resolve(dirname(file), specifier) : specifier);
  const add = (specifier: string, name: string) => {
    const to = target(specifier);
    if (!uses.names.has(to)) uses.names.set(to, new Set());
    uses.names.get(to)!.add(name);
  };
  const unclear = (node: ts.Node, what: string) => {
    const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
    uses.unclear.push(`${posix(relative(root, file))}:${line + 1}: ${what}`);
  };

  // `ns.name` (a value) or `ns.Name` (a type) for every use of the namespace binding `ns`.
  const namespaceUses = (ns: ts.Identifier, specifier: string) => {
    const visit = (node: ts.Node): void => {
      if (ts.isIdentifier(node) && node !== ns && node.text === ns.text) {
        const parent = node.parent;
        if (ts.isPropertyAccessExpression(parent) && parent.expression === node) add(specifier, parent.name.text);
        else if (ts.isQualifiedName(parent) && parent.left === node) add(specifier, parent.right.text);
        else if (!(ts.isPropertyAccessExpression(parent) && parent.name === node) && !(ts.isQualifiedName(parent) && parent.right === node) && !ts.isPropertyAssignment(parent))
          unclear(node, `namespace ${ns.text} of '${specifier}' is used other than as ${ns.text}.name`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  };

  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const specifier = node.moduleSpecifier.text;
      const clause = node.importClause;
      if (clause?.name) add(specifier, 'default');
      const bindings = clause?.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) namespaceUses(bindings.name, specifier);
      else if (bindings) for (const element of bindings.elements) add(specifier, (element.propertyName ?? element.name).text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const specifier = node.moduleSpecifier.text;
      if (node.exportClause && ts.isNamedExports(node.exportClause)) for (const element of node.exportClause.elements) add(specifier, (element.propertyName ?? element.name).text);
      else uses.all.add(target(specifier));
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteralLike(argument)) {
        let up: ts.Node = node.parent;
        if (ts.isAwaitExpression(up)) up = up.parent;
        if (ts.isParenthesizedExpression(up)) up = up.parent;
        if (ts.isPropertyAccessExpression(up)) add(argument.text, up.name.text);
        else if (ts.isVariableDeclaration(up) && ts.isObjectBindingPattern(up.name) && up.name.elements.every((e) => !e.dotDotDotToken && ts.isIdentifier(e.propertyName ?? e.name)))
          for (const element of up.name.elements) add(argument.text, ((element.propertyName ?? element.name) as ts.Identifier).text);
        else unclear(node, `import('${argument.text}') is used other than as (await import(...)).name or const { name } = await import(...)`);
      }
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      const specifier = node.argument.literal.text;
      let qualifier = node.qualifier;
      while (qualifier && ts.isQualifiedName(qualifier)) qualifier = qualifier.left;
      if (qualifier) add(specifier, qualifier.text);
      else unclear(node, `typeof import('${specifier}') takes the whole module`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return uses;
}

/** The names each door exports, as the compiler sees them (so `export *` expands to what it re-exports). */
function doorNames(doors: string[]): Map<string, string[]> {
  const program = ts.createProgram(doors, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    allowImportingTsExtensions: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  });
  const checker = program.getTypeChecker();
  return new Map(
    doors.map((door) => {
      const source = program.getSourceFile(door);
      const symbol = source && checker.getSymbolAtLocation(source);
      if (!symbol) throw new Error(`the compiler found no module in ${door}`);
      return [door, checker.getExportsOfModule(symbol).map((s) => s.name).sort()];
    }),
  );
}

/**
 * For the tree at `root`: each door's exported names that no file of src/ or workers/ outside its
 * module imports (`door: a, b`), and the uses the scan could not read (which would hide callers).
 */
export function unusedDoorNames(root: string): { unused: string[]; unclear: string[]; doors: number } {
  const files = CALLER_ROOTS.flatMap((dir) => sourceFiles(join(root, dir)));
  const doors = files.filter((f) => DOOR.test(posix(relative(root, f))));
  const exported = doorNames(doors);
  const unused: string[] = [];
  const unclear: string[] = [];
  const callers = files.map((file) => ({ rel: posix(relative(root, file)), uses: usesOf(file, readFileSync(file, 'utf8'), root) }));
  for (const { uses } of callers) unclear.push(...uses.unclear);
  for (const door of doors) {
    const module = posix(relative(root, dirname(door))) + '/';
    const outside = callers.filter(({ rel }) => !rel.startsWith(module));
    if (outside.some(({ uses }) => uses.all.has(door))) continue;
    const used = new Set(outside.flatMap(({ uses }) => [...(uses.names.get(door) ?? [])]));
    const idle = exported.get(door)!.filter((name) => !used.has(name));
    if (idle.length) unused.push(`${posix(relative(root, door))}: ${idle.join(', ')}`);
  }
  return { unused, unclear, doors: doors.length };
}

describe('module doors export what their callers use, no more', () => {
  let root: string;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'doors-'));
  });

  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  async function tree(files: Record<string, string>): Promise<string> {
    const dir = await mkdtemp(join(root, 't-'));
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), text);
    }
    return dir;
  }

  it('every name on every door of src/modules is imported by a file of src/ or workers/ outside its module', () => {
    const { unused, unclear, doors } = unusedDoorNames(REPO);
    expect(doors).toBeGreaterThan(10);
    expect(unclear, 'imports whose names the scan cannot tell (they could hide a caller)').toEqual([]);
    expect(unused, "names on a door that no caller outside the module imports (a test imports a module's internal file instead)").toEqual([]);
  });

  it('the scan expands export * and counts every form of import, and not the module itself or a test', async () => {
    const dir = await tree({
      'src/modules/a/index.ts': "export * from './star.ts';\nexport { named, type Shape } from './named.ts';\nexport const own = 1;\nexport const ownIdle = 2;\n",
      'src/modules/a/star.ts': 'export const viaStar = 1;\nexport const starIdle = 2;\nexport const starByType = 3;\nexport type Dyn = { d: number };\n',
      'src/modules/a/named.ts': "import { ownIdle } from './index.ts';\nexport const named = ownIdle;\nexport type Shape = { s: string };\n",
      'src/modules/b/index.ts': "export { fromB } from './b.ts';\n",
      'src/modules/b/b.ts': "import * as a from '../a/index.ts';\nexport const fromB: a.Shape = { s: String(a.viaStar) };\n",
      'src/app.ts': "import { own } from './modules/a/index.ts';\nexport const x = own + (await import('./modules/a/index.ts')).named;\nexport type D = import('./modules/a/index.ts').Dyn;\n",
      'workers/main.ts': "import { fromB } from '../src/modules/b/index.ts';\nexport { starByType as s } from '../src/modules/a/index.ts';\nexport const y = fromB;\n",
      'test/unit/a.test.ts': "import { starIdle } from '../../src/modules/a/index.ts';\nexport const z = starIdle;\n",
    });
    expect(unusedDoorNames(dir)).toEqual({ unused: ['src/modules/a/index.ts: ownIdle, starIdle'], unclear: [], doors: 2 });
  });

  it('the scan names a namespace or dynamic import it cannot read rather than guess', async () => {
    const dir = await tree({
      'src/modules/a/index.ts': 'export const one = 1;\n',
      'src/app.ts': "import * as a from './modules/a/index.ts';\nexport const all = a;\nexport const later = import('./modules/a/index.ts');\n",
    });
    expect(unusedDoorNames(dir).unclear).toEqual([
      "src/app.ts:2: namespace a of './modules/a/index.ts' is used other than as a.name",
      "src/app.ts:3: import('./modules/a/index.ts') is used other than as (await import(...)).name or const { name } = await import(...)",
    ]);
  });
});
