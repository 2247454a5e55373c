import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

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
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  logLevel: 'warn',
});
