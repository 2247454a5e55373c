import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../setup/harness.ts';
import { ensurePortalBuilt } from '../e2e/portal-kit.ts';

// The portal's files are served compressed. The build writes <file>.br and <file>.gz
// (portal/vite.config.ts); the API process sends the one the request accepts, with Vary: Accept-Encoding.

let stack: Stack;
beforeAll(async () => {
  ensurePortalBuilt();
  stack = await startStack({ workers: false });
});
afterAll(async () => stack?.close());

type Raw = { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer };

/** A request with exactly the Accept-Encoding given (fetch would add its own and decompress). */
function get(path: string, acceptEncoding: string | null, method = 'GET'): Promise<Raw> {
  const url = new URL(path, stack.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method, headers: acceptEncoding === null ? {} : { 'accept-encoding': acceptEncoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const script = () => readdirSync('portal/dist/assets').find((f) => /^index-.*\.js$/.test(f))!;

describe('the portal is served compressed', () => {
  it('When the browser accepts brotli, then the script comes as brotli (its type kept, cached a year, Vary: Accept-Encoding) and decompresses to the built file', async () => {
    const name = script();
    const original = readFileSync(`portal/dist/assets/${name}`);
    const r = await get(`/portal/assets/${name}`, 'gzip, deflate, br, zstd');
    expect(r.status).toBe(200);
    expect(r.headers['content-encoding']).toBe('br');
    expect(r.headers['content-type']).toMatch(/^text\/javascript/);
    expect(r.headers.vary).toMatch(/Accept-Encoding/i);
    expect(r.headers['cache-control']).toMatch(/max-age=31536000.*immutable/);
    expect(Number(r.headers['content-length'])).toBe(r.body.length);
    expect(r.body.length).toBeLessThan(original.length / 2);
    expect(brotliDecompressSync(r.body).equals(original)).toBe(true);
  });

  it('When the browser accepts only gzip, or nothing, or refuses both, then it gets gzip, or the plain file, each with Vary', async () => {
    const name = script();
    const original = readFileSync(`portal/dist/assets/${name}`);
    const gz = await get(`/portal/assets/${name}`, 'gzip');
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).equals(original)).toBe(true);
    for (const accept of [null, 'identity', 'br;q=0, gzip;q=0']) {
      const plain = await get(`/portal/assets/${name}`, accept);
      expect({ accept, status: plain.status, encoding: plain.headers['content-encoding'], same: plain.body.equals(original) }).toEqual({ accept, status: 200, encoding: undefined, same: true });
      expect(plain.headers.vary).toMatch(/Accept-Encoding/i);
    }
    const css = readdirSync('portal/dist/assets').find((f) => /\.css$/.test(f))!;
    const styles = await get(`/portal/assets/${css}`, 'br');
    expect({ encoding: styles.headers['content-encoding'], type: styles.headers['content-type'] }).toEqual({ encoding: 'br', type: 'text/css; charset=utf-8' });
    const head = await get(`/portal/assets/${name}`, 'br', 'HEAD');
    expect({ status: head.status, encoding: head.headers['content-encoding'], body: head.body.length }).toEqual({ status: 200, encoding: 'br', body: 0 });
  });

  it('When a deep link of the portal is opened, then the page is compressed too, keeps its CSP, and a missing asset is still 404', async () => {
    const page = await get('/portal/history?statement=2026-10', 'br');
    expect(page.status).toBe(200);
    expect(page.headers['content-encoding']).toBe('br');
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers.vary).toMatch(/Accept-Encoding/i);
    expect(brotliDecompressSync(page.body).equals(readFileSync('portal/dist/index.html'))).toBe(true);
    expect((await get('/portal/assets/nothing-here.js', 'br')).status).toBe(404);
    // A path out of the assets is refused before any compressed file is looked for.
    const escape = await get('/portal/assets/..%2f..%2fpackage.json', 'br');
    expect({ refused: escape.status >= 400, leaked: escape.body.toString().includes('"dependencies"') }).toEqual({ refused: true, leaked: false });
  });
});
