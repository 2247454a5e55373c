import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { codeBlocks, run, toolchain } from './helpers.ts';

// The Go client's own `go test` suite (signatures of both schemes, rotation, tampering, old
// timestamps, error mapping, token renewal against httptest), run with the machine's Go. GOPROXY=off:
// the module has no dependencies, and a build that tried to download one must fail here, not hang.
const DIR = fileURLToPath(new URL('../../clients/go', import.meta.url));
const go = toolchain('go', ['version']);

describe.skipIf(!go.present)('Go client', () => {
  it('When `go vet` and `go test` run on the module without network, then both pass', () => {
    const env = { GOPROXY: 'off', GOFLAGS: '', GOTOOLCHAIN: 'local' };
    const vet = run('go', ['vet', './...'], DIR, env);
    expect(vet.status, vet.output).toBe(0);
    const test = run('go', ['test', '-count=1', './...'], DIR, env);
    expect(test.status, test.output).toBe(0);
    expect(test.output).toMatch(/^ok\s+idverify\b/m);
  });

  it('When the module is formatted with gofmt, then nothing changes', () => {
    const r = run('gofmt', ['-l', '.'], DIR);
    expect(r.status, r.output).toBe(0);
    expect(r.output.trim()).toBe('');
  });
});

describe('Go client README', () => {
  it('When the README shows the five-minute walk, then it is examples/walk/main.go verbatim (the program walk.sh runs and walks.test.ts checks)', () => {
    const readme = readFileSync(`${DIR}/README.md`, 'utf8');
    const program = readFileSync(`${DIR}/examples/walk/main.go`, 'utf8').replace(/\n$/, '');
    expect(codeBlocks(readme, 'go')).toContain(program);
  });
});
