import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { codeBlocks, run, toolchain } from './helpers.ts';

// The Python client's own unittest suite (signatures of both schemes, rotation, tampering, old
// timestamps, error mapping, token renewal against a local fake API), run with the machine's python3.
const DIR = fileURLToPath(new URL('../../clients/python', import.meta.url));
const python = toolchain('python3', ['--version']);

describe.skipIf(!python.present)('Python client', () => {
  it('When its unittest suite runs, then every test passes', () => {
    const r = run('python3', ['-B', '-m', 'unittest', 'discover', '-s', 'tests', '-t', '.', '-v'], DIR);
    expect(r.status, r.output).toBe(0);
    expect(r.output).toMatch(/Ran \d+ tests/);
  });

  it('When its source is parsed as Python 3.9, then it parses (no syntax newer than 3.9)', () => {
    const script = [
      'import ast, pathlib, sys',
      'bad = []',
      'for p in sorted(pathlib.Path(".").rglob("*.py")):',
      '    try:',
      '        ast.parse(p.read_text(encoding="utf-8"), str(p), feature_version=(3, 9))',
      '    except SyntaxError as e:',
      '        bad.append("%s: %s" % (p, e))',
      'print("\\n".join(bad))',
      'sys.exit(1 if bad else 0)',
    ].join('\n');
    const r = run('python3', ['-B', '-c', script], DIR);
    expect(r.status, r.output).toBe(0);
  });
});

describe('Python client README', () => {
  it('When the README shows the five-minute walk, then it is examples/walk.py verbatim (the program walk.sh runs and walks.test.ts checks)', () => {
    const readme = readFileSync(`${DIR}/README.md`, 'utf8');
    const program = readFileSync(`${DIR}/examples/walk.py`, 'utf8').replace(/\n$/, '');
    expect(codeBlocks(readme, 'python')).toContain(program);
  });
});
