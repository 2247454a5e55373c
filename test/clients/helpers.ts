import { spawnSync } from 'node:child_process';

/**
 * Whether a language's toolchain is on this machine. CI installs every one (.ci/run), so there a
 * missing one fails the suite instead of skipping it quietly; elsewhere the language's tests skip.
 */
export function toolchain(command: string, args: string[]): { present: boolean; version: string } {
  const r = spawnSync(command, args, { encoding: 'utf8' });
  const present = r.status === 0;
  if (!present && process.env.CI) throw new Error(`CI is set but \`${command} ${args.join(' ')}\` does not run: install the toolchain (see .ci/run)`);
  return { present, version: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() };
}

/** Runs a command to its end; its output is kept whole for the failure message. */
export function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): { status: number | null; output: string } {
  const r = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    timeout: 300_000,
  });
  return { status: r.status, output: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
}

/** The fenced code blocks of a markdown text fenced with `lang`, as written. */
export function codeBlocks(markdown: string, lang: string): string[] {
  const blocks: string[] = [];
  const re = new RegExp('^```' + lang + '\\n([\\s\\S]*?)^```$', 'gm');
  for (const m of markdown.matchAll(re)) blocks.push(m[1]!.replace(/\n$/, ''));
  return blocks;
}
