import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSeededSandbox, stopNpmStart, type NpmStart } from '../setup/npm-start.ts';
import { waitFor } from '../setup/wait.ts';
import { toolchain } from './helpers.ts';

// Each client's five-minute walk (`bash clients/<language>/examples/walk.sh`), run as its README says
// against one `npm start` sandbox: the lines it prints are checked against what the API itself says,
// and its webhook verifier is given a delivery the stack really sent (valid) and a tampered copy.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LANGUAGES: Record<string, [string, string[]][]> = {
  python: [['python3', ['--version']]],
  go: [['go', ['version']]],
  php: [['php', ['--version']]],
  java: [
    ['java', ['--version']],
    ['javac', ['--version']],
  ],
};

type Hook = { headers: Record<string, string>; body: string };

let s: NpmStart;
let base: string;
let password: string;
let dir: string;
let webhookFiles: string[];

async function api(method: string, path: string, o: { token?: string; json?: unknown; form?: Record<string, string> } = {}) {
  const headers: Record<string, string> = {};
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  let body: string | undefined;
  if (o.json !== undefined) (headers['content-type'] = 'application/json'), (body = JSON.stringify(o.json));
  if (o.form) (headers['content-type'] = 'application/x-www-form-urlencoded'), (body = new URLSearchParams(o.form).toString());
  const r = await fetch(`${base}${path}`, { method, headers, body });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

const login = async () => (await api('POST', '/login', { form: { username: 'demo-admin', password } })).access_token as string;

/** A delivery as the receiver got it: the sandbox's hook receiver keeps headers (lower-cased) and the raw body. */
async function capturedDelivery(): Promise<{ secret: string; hook: Hook }> {
  const token = await login();
  const name = `walks-${randomBytes(4).toString('hex')}`;
  const hooks = `http://127.0.0.1:${s.ports.identity}/sandbox/hooks/${name}`;
  const endpoint = await api('POST', '/webhook-endpoints', { token, json: { url: hooks, events: ['ping'] } });
  await api('POST', `/webhook-endpoints/${endpoint.id}/test`, { token });
  const hook = await waitFor(
    async () => {
      const list = (await (await fetch(hooks)).json()) as { data: Hook[] };
      return list.data.find((h) => h.headers['idverify-event-type'] === 'ping');
    },
    { what: 'the ping delivery at the sandbox receiver', timeoutMs: 30_000 },
  );
  return { secret: endpoint.secret, hook };
}

function walk(language: string, extra: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', [`clients/${language}/examples/walk.sh`], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        IDVERIFY_BASE_URL: base,
        IDVERIFY_USERNAME: 'demo-admin',
        IDVERIFY_PASSWORD: password,
        ...extra,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

beforeAll(async () => {
  ({ sandbox: s, adminPassword: password } = await startSeededSandbox());
  base = `http://localhost:${s.ports.api}/v1`;

  const { secret, hook } = await capturedDelivery();
  dir = mkdtempSync(join(tmpdir(), 'walks-'));
  const real = join(dir, 'delivery.json');
  const tampered = join(dir, 'tampered.json');
  writeFileSync(real, JSON.stringify({ secret, headers: hook.headers, body: hook.body }));
  writeFileSync(tampered, JSON.stringify({ secret, headers: hook.headers, body: hook.body.replace('"ping"', '"pong"') }));
  webhookFiles = [real, tampered];
}, 180_000);

afterAll(async () => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  await stopNpmStart(s);
});

describe('each client walks the five-minute walk against npm start', () => {
  for (const [language, tools] of Object.entries(LANGUAGES)) {
    const present = tools.every(([cmd, args]) => toolchain(cmd, args).present);
    it.skipIf(!present)(
      `When ${language}'s walk.sh runs, then it prints me (the balance GET /me gives), the fixture NIN's record, a requery that ended and the webhook verdicts (real delivery valid, tampered invalid)`,
      { timeout: 240_000 },
      async () => {
        expect(existsSync(join(ROOT, 'clients', language, 'examples', 'walk.sh')), `clients/${language}/examples/walk.sh`).toBe(true);
        const before = await api('GET', '/me', { token: await login() });
        // The delivery was captured in beforeAll and the walks before this one may take minutes on a busy
        // machine: 0 turns off the verifier's 5-minute timestamp window, so the signature alone decides.
        const r = await walk(language, { IDVERIFY_WEBHOOK_FILES: webhookFiles.join(','), IDVERIFY_WEBHOOK_TOLERANCE: '0' });
        expect(r.status, `${r.stderr}\n${r.stdout}`).toBe(0);
        const lines = r.stdout
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l));
        expect(lines.map((l) => l.step)).toEqual(['me', 'verify_nin', 'requery', 'webhook', 'webhook']);

        const [me, verify, requery, real, tampered] = lines;
        expect(typeof me.units).toBe('number');
        expect(me.units).toBe(before.organisation.units);

        expect(verify.answer.data).toMatchObject({ nin: '12345678901', fname: 'Adaeze', lname: 'Okonkwo', transaction_id: 'FIXTURE-TXN-12345678901' });
        expect(verify.answer.data.reference_id).toMatch(/^REF-[A-Z0-9]{12}$/);

        expect(requery.answer.status).toBe('success');
        expect(requery.answer.data).toMatchObject({ nin: '23456789012', reference_id: expect.stringMatching(/^REF-/) });

        expect(real).toEqual({ step: 'webhook', valid: true });
        expect(tampered).toEqual({ step: 'webhook', valid: false });
      },
    );
  }

  it.skipIf(!toolchain('python3', ['--version']).present)('When the webhook files are unset, then a walk prints no webhook line', { timeout: 120_000 }, async () => {
    const r = await walk('python', {});
    expect(r.status, r.stderr).toBe(0);
    const steps = r.stdout
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l).step);
    expect(steps).toEqual(['me', 'verify_nin', 'requery']);
  });
});
