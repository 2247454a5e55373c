import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSeededSandbox, stopNpmStart, type NpmStart } from '../setup/npm-start.ts';

// docs/integration.md promises "every step a command that works". This runs its `sh` blocks in order,
// in one bash (variables carry from block to block), against a sandbox started here on free ports, as a
// newcomer would after `npm start`. Blocks fenced `sh manual` are the steps this test does itself
// (starting the sandbox, pasting the printed password).

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DOC = 'docs/integration.md';

type Block = { info: string; line: number; text: string };

/** The fenced blocks of a markdown text, with the line their code starts on (1-based). */
function fencedBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end] !== '```') end++;
    if (end === lines.length) throw new Error(`${DOC}:${i + 1}: a fence that is never closed`);
    blocks.push({ info: open[1]!.trim(), line: start + 1, text: lines.slice(start, end).join('\n') });
    i = end;
  }
  return blocks;
}

/**
 * A command ending in a status comment (`curl ... # 404 NIN not found`) shows an error on purpose:
 * it must answer that status. Every other curl must answer below 400 (the prelude's wrapper).
 */
function withExpectedStatuses(block: Block): string {
  const physical = block.text.split('\n');
  const out: string[] = [];
  let command: string[] = [];
  for (const line of physical) {
    command.push(line);
    if (line.endsWith('\\')) continue;
    const status = /\s#\s*([1-5]\d\d)\b/.exec(line);
    if (status) {
      if (!/^curl\s/.test(command[0]!)) throw new Error(`${DOC}:${block.line}: a status comment on a command that is not a plain curl: ${command[0]}`);
      command[0] = `EXPECT_STATUS=${status[1]} ${command[0]}`;
    }
    out.push(...command);
    command = [];
  }
  return out.join('\n');
}

// The doc's curl calls, as written, plus: an HTTP error fails the step (showing the answer), unless the
// line says which status it expects. Stricter than the doc, never looser.
const PRELUDE = [
  'set -euo pipefail',
  'curl() {',
  '  if [[ -z "${EXPECT_STATUS:-}" ]]; then command curl --fail-with-body "$@"; return; fi',
  "  local out; out=$(command curl -w '\\n%{http_code}' \"$@\")",
  "  printf '%s\\n' \"${out%$'\\n'*}\"",
  "  local got=\"${out##*$'\\n'}\"",
  '  if [[ "$got" != "$EXPECT_STATUS" ]]; then echo "expected HTTP $EXPECT_STATUS, got $got" >&2; return 1; fi',
  '}',
].join('\n');

function docScript(markdown: string, ports: { api: number; identity: number }): { script: string; ran: Block[] } {
  const blocks = fencedBlocks(markdown);
  const shellish = blocks.filter((b) => /^(sh|bash|shell|zsh|console)\b/.test(b.info));
  const unknown = shellish.filter((b) => b.info !== 'sh' && b.info !== 'sh manual');
  // A shell block under another name would be skipped silently; the doc says `sh` or `sh manual`.
  if (unknown.length) throw new Error(`${DOC}: shell blocks must be fenced \`sh\` or \`sh manual\`: ${unknown.map((b) => `line ${b.line} (${b.info})`).join(', ')}`);
  const ran = shellish.filter((b) => b.info === 'sh');
  // Starting (or installing) is this test's part: never run from the doc against the shared node_modules.
  const starts = ran.find((b) => /\bnpm (ci|install|i|start)\b/.test(b.text));
  if (starts) throw new Error(`${DOC}:${starts.line}: a block that installs or starts the sandbox must be fenced \`sh manual\``);
  const parts = ran.map((b) => `echo "@@ ${DOC} block at line ${b.line}" >&2\n${withExpectedStatuses(b)}`);
  // The doc names the default ports; this sandbox has its own.
  const script = `${PRELUDE}\n${parts.join('\n')}\necho "@@ every block ran" >&2\n`
    .replaceAll('localhost:8080', `localhost:${ports.api}`)
    .replaceAll('127.0.0.1:4010', `127.0.0.1:${ports.identity}`);
  const stray = /(?:localhost|127\.0\.0\.1):(?:8080|4010|4020|4025)\b/.exec(script);
  if (stray) throw new Error(`${DOC}: a runnable block names a sandbox address this test does not map to its own ports: ${stray[0]}`);
  return { script, ran };
}

let s: NpmStart;
let password: string;
beforeAll(async () => {
  ({ sandbox: s, adminPassword: password } = await startSeededSandbox());
}, 120_000);
afterAll(async () => stopNpmStart(s));

it('When docs/integration.md is followed block by block in one bash against a fresh sandbox, then every command succeeds and every call answers what the doc says', { timeout: 150_000 }, async () => {
  const { script, ran } = docScript(readFileSync(`${ROOT}/${DOC}`, 'utf8'), s.ports);
  // The path end to end: sign in, credentials, verify, requery, async, batch, history, top-up, e-mail, client.
  expect(ran.length).toBeGreaterThanOrEqual(10);

  const bash = spawn('bash', ['-c', script], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', PASSWORD: password },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  bash.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  bash.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => bash.once('exit', (c) => resolve(c)));

  const reached = [...stderr.matchAll(/^@@ (.*)$/gm)].map((m) => m[1]).at(-1);
  const report = `exit ${code}; last block started: ${reached}\n--- stderr (end)\n${stderr.slice(-2500)}\n--- stdout (end)\n${stdout.slice(-1500)}`;
  expect(code, report).toBe(0);
  expect(reached, report).toBe('every block ran');
  // Step 10's receipt and step 11's example, seen in what the commands printed.
  expect(stdout).toMatch(/Payment receipt TOP-/);
  expect(stdout).toMatch(/verified: reference_id=REF-/);
});
