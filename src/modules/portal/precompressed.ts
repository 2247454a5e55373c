import { existsSync } from 'node:fs';
import { extname, join } from 'node:path';
import type { Request, RequestHandler, Response } from 'express';

// The portal's files are compressed once, at build time (portal/vite.config.ts writes `<file>.br` and
// `<file>.gz` beside each), and sent as they are: no compression per request, and no compression
// middleware to depend on. Brotli first (a fifth smaller than gzip on the portal's script).
const ENCODINGS = [
  { token: 'br', suffix: '.br' },
  { token: 'gzip', suffix: '.gz' },
] as const;

/**
 * The encoding to send `file` in: brotli when the request accepts it and it was built, else gzip, else
 * none (the file as it is). Our order, not the header's: browsers list gzip first and mean no preference.
 */
export function pickEncoding(req: Request, file: string): (typeof ENCODINGS)[number] | null {
  return ENCODINGS.find((e) => req.acceptsEncodings(e.token) === e.token && existsSync(file + e.suffix)) ?? null;
}

/** The headers of an answer whose body depends on Accept-Encoding, compressed or not. */
export function varyOnEncoding(res: Response): void {
  res.vary('Accept-Encoding');
}

/**
 * In front of express.static for a directory of hashed assets: a GET or HEAD of a file we have
 * compressed is answered with that file and its Content-Encoding (Content-Type is the original's);
 * anything else falls through to express.static, which sends the file as it is.
 */
export function precompressedAssets(dir: string): RequestHandler {
  return (req, res, next) => {
    varyOnEncoding(res);
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    // One file name, no directories or dots in front: the same files express.static would serve.
    if (!/^\/[A-Za-z0-9_-][A-Za-z0-9_.-]*$/.test(req.path)) return next();
    const file = join(dir, req.path);
    if (!existsSync(file)) return next();
    const encoding = pickEncoding(req, file);
    if (!encoding) return next();
    res.type(extname(file));
    res.setHeader('Content-Encoding', encoding.token);
    res.sendFile(file + encoding.suffix, { immutable: true, maxAge: '365d', dotfiles: 'deny' }, (err) => {
      if (err) next(err);
    });
  };
}
