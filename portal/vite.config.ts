import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

/**
 * Writes `<file>.br` and `<file>.gz` beside every text file of the build, compressed once at the
 * highest levels, so the API process serves them as they are (src/modules/portal/precompressed.ts)
 * instead of compressing on every request. node:zlib only: no compression plugin to depend on.
 */
function precompress(): Plugin {
  const TEXT = /\.(js|css|html|svg|json|txt)$/;
  const walk = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
  return {
    name: 'idverify-precompress',
    apply: 'build',
    writeBundle(output) {
      if (!output.dir) throw new Error('precompress: the build has no output directory');
      for (const file of walk(output.dir).filter((f) => TEXT.test(f))) {
        const body = readFileSync(file);
        writeFileSync(`${file}.br`, brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }));
        writeFileSync(`${file}.gz`, gzipSync(body, { level: constants.Z_BEST_COMPRESSION }));
      }
    },
  };
}

// The portal is built into portal/dist and served by the API process at /portal; assets are asked for
// under absolute URLs (/portal/assets/...) so a deep link such as /portal/history reloads.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/portal/',
  publicDir: false,
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    // No inline scripts or styles: the portal's Content-Security-Policy allows only its own files.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
  },
  plugins: [precompress()],
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  logLevel: 'warn',
});
