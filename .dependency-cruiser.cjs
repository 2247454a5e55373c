// Which way imports may run in src/ and workers/; `npm run lint:deps` (part of `npm test`) fails on a
// violation. Paths are relative to the directory dependency-cruiser runs in, so the same rules also
// judge the throwaway trees of test/architecture/dependency-rules.test.ts.

/**
 * A module's door: the one file of src/modules/<m>/ that code outside <m> may import. What it exports is
 * checked by test/architecture/module-doors.test.ts: only names some caller outside <m> imports.
 */
const DOOR = '^src/modules/[^/]+/index\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-module-cycle',
      severity: 'error',
      comment: 'Modules depend on each other one way only: no import cycle may pass through a second module.',
      from: { path: '^src/modules/([^/]+)/' },
      to: { circular: true, via: { path: '^src/modules/(?!$1/)[^/]+/' } },
    },
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'No import cycle at all between files in src/ and workers/, type-only imports included.',
      from: { path: '^(src|workers)/' },
      to: { circular: true },
    },
    {
      // dependency-cruiser's folder-scope cycles would see a module in a cycle with any folder holding
      // both what modules import and what imports them (src/openapi once did: now src/openapi holds the
      // shared schemas modules import, and src/api-document gathers the modules' paths).
      // A file that is not reached from its module's door would let two modules import each other with
      // no file cycle (a/other.ts -> b/index.ts -> b/x.ts -> a/index.ts). With this rule and
      // only-through-door, every cycle between modules is a cycle between files, and no-module-cycle
      // reports it.
      name: 'reached-through-door',
      severity: 'error',
      comment: "Every file of a module is used through the module's index.ts (nothing dead or entered sideways).",
      from: { path: '^src/modules/([^/]+)/index\\.ts$' },
      // A `*.browser.js` file is not imported: the module serves it to browsers as a file.
      to: { path: '^src/modules/$1/', pathNot: [DOOR, '\\.browser\\.js$'], reachable: false },
    },
    {
      name: 'only-through-door',
      severity: 'error',
      comment: "Another module reaches a module only through its index.ts; a module's own files import each other freely.",
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/', pathNot: ['^src/modules/$1/', DOOR] },
    },
    {
      name: 'only-through-door',
      severity: 'error',
      comment: 'Entry points and shared code (app, runtime, cli, openapi, workers, ...) reach a module only through its index.ts.',
      from: { path: '^(src|workers)/', pathNot: '^src/modules/' },
      to: { path: '^src/modules/', pathNot: DOOR },
    },
    {
      name: 'only-mail-sends',
      severity: 'error',
      comment: 'The mail module owns the outbox, sealing and sending: others queue e-mail through src/modules/mail/index.ts, none opens a mail transport.',
      from: { path: '^(src|workers)/', pathNot: '^src/modules/mail/' },
      to: { path: '(^|/)node_modules/nodemailer/' },
    },
    {
      name: 'verification-not-to-batches',
      severity: 'error',
      comment:
        'Batches own the batch flow: they start a lookup through the verification door and consume its settlement; verification never calls back into batches, not even through its door.',
      from: { path: '^src/modules/verification/' },
      to: { path: '^src/modules/batches/' },
    },
    {
      name: 'processors-are-wiring',
      severity: 'error',
      comment:
        "A processor file names a job and calls its module's function: it imports module doors and the shared context (src/context.ts) only, so no logic (a library, a helper of src/lib or src/jobs, an adapter) settles in workers/processors.",
      from: { path: '^workers/processors/' },
      to: { pathNot: [DOOR, '^src/context\\.ts$'] },
    },
    {
      name: 'verification-job-not-to-batches',
      severity: 'error',
      comment:
        "A batch lookup's settlement reaches batches as a job (batch.lookup-settled, run by workers/processors/batches.ts): the verification jobs' processors import nothing of batches.",
      from: { path: '^workers/processors/verification\\.ts$' },
      to: { path: '^src/modules/batches/' },
    },
    {
      name: 'lib-and-jobs-stay-below-modules',
      severity: 'error',
      comment: 'src/lib and src/jobs are what modules are built on, so they import no module, adapter or worker.',
      from: { path: '^src/(lib|jobs)/' },
      to: { path: '^(src/modules|src/adapters|workers)/' },
    },
    {
      name: 'src-not-to-workers',
      severity: 'error',
      comment: 'Workers import src, never the other way round.',
      from: { path: '^src/' },
      to: { path: '^workers/' },
    },
    {
      name: 'adapters-import-no-module',
      severity: 'error',
      comment: 'Adapters speak to an upstream; the modules call them, not the reverse.',
      from: { path: '^src/adapters/' },
      to: { path: '^src/modules/' },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      comment: 'An import the checker cannot resolve is an import the rules above cannot judge.',
      from: { path: '^(src|workers)/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // Type-only imports are dependencies too: a cycle through `import type` is still a cycle of ideas.
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    // Resolve packages the way Node does for our ESM ('exports' with the import conditions), so that
    // no-unresolvable reports only imports Node could not load either.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'node', 'default'] },
  },
};
