import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { Request, Response } from 'express';

/**
 * The page's script and stylesheet, read once, named by their content's hash (so they may be cached
 * for a year and a new version is a new name) and compressed once. Phones on slow networks are who
 * opens these links: the page's first load is measured under 60 KB compressed (docs/links.md).
 */
export type Asset = { name: string; type: string; raw: Buffer; br: Buffer; gzip: Buffer };

function asset(file: string, name: string, ext: string, type: string): Asset {
  const raw = readFileSync(new URL(file, import.meta.url));
  return { name: `${name}-${createHash('sha256').update(raw).digest('hex').slice(0, 12)}${ext}`, type, raw, br: brotliCompressSync(raw), gzip: gzipSync(raw, { level: 9 }) };
}

let loaded: { js: Asset; css: Asset; byName: Map<string, Asset> } | null = null;

export function pageAssets() {
  if (!loaded) {
    const js = asset('./link.browser.js', 'link', '.js', 'text/javascript; charset=utf-8');
    const css = asset('./link.css', 'link', '.css', 'text/css; charset=utf-8');
    loaded = { js, css, byName: new Map([js, css].map((a) => [a.name, a])) };
  }
  return loaded;
}

/** The encodings the client takes, best first (q=0 refuses one). */
function accepted(req: Request): { br: boolean; gzip: boolean } {
  const header = (req.get('accept-encoding') ?? '').toLowerCase();
  const takes = (name: string) => header.split(',').some((part) => {
    const [coding, ...params] = part.trim().split(';');
    return coding === name && !params.some((p) => /^\s*q=0(\.0*)?\s*$/.test(p));
  });
  return { br: takes('br'), gzip: takes('gzip') };
}

/** Sends `body` compressed as the client allows (brotli, else gzip, else as it is). */
export function sendCompressed(req: Request, res: Response, type: string, body: { raw: Buffer; br?: Buffer; gzip?: Buffer }): void {
  const a = accepted(req);
  res.setHeader('Vary', 'Accept-Encoding');
  res.type(type);
  if (a.br) {
    res.setHeader('Content-Encoding', 'br');
    res.send(body.br ?? brotliCompressSync(body.raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } }));
  } else if (a.gzip) {
    res.setHeader('Content-Encoding', 'gzip');
    res.send(body.gzip ?? gzipSync(body.raw));
  } else {
    res.send(body.raw);
  }
}
