/** Flag reading shared by the admin commands: a missing or malformed flag is a usage error (exit 2). */

export type Flags = Record<string, string | boolean | undefined>;

export class UsageError extends Error {}

export function need(flags: Flags, name: string): string {
  const v = flags[name];
  if (typeof v !== 'string' || v.trim() === '') throw new UsageError(`--${name} is required`);
  return v;
}

export function int(flags: Flags, name: string, required = true): number | undefined {
  const v = flags[name];
  if (v === undefined && !required) return undefined;
  const s = need(flags, name);
  if (!/^-?\d+$/.test(s)) throw new UsageError(`--${name} must be an integer`);
  return Number(s);
}
