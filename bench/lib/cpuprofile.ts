import { readFileSync } from 'node:fs';

/**
 * Summarises a V8 .cpuprofile: self time per function and per "area" (our code by file, each npm
 * package, Node internals, garbage collection, idle), as shares of the sampled time.
 */
type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number };
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };

function area(url: string, fn: string): string {
  if (fn === '(garbage collector)') return 'GC';
  if (fn === '(idle)') return 'idle';
  if (fn === '(program)') return 'program (native)';
  if (!url) return 'native/builtin';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return `npm:${pkg[1]}`;
  if (url.startsWith('node:')) return 'node internals';
  const ours = /\/work\/main\/(.+)$/.exec(url.replace('file://', ''));
  return ours ? ours[1]! : url;
}

export function summariseProfile(path: string, top = 12) {
  const p = JSON.parse(readFileSync(path, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0));
  const total = [...self.values()].reduce((a, b) => a + b, 0) || 1;
  const fns = new Map<string, number>();
  const areas = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const a = area(n.callFrame.url, n.callFrame.functionName);
    areas.set(a, (areas.get(a) ?? 0) + us);
    const key = `${n.callFrame.functionName || '(anonymous)'} ${a}:${n.callFrame.lineNumber + 1}`;
    fns.set(key, (fns.get(key) ?? 0) + us);
  }
  const pct = (us: number) => Math.round((us / total) * 1000) / 10;
  const busy = total - (areas.get('idle') ?? 0);
  return {
    sampledS: Math.round(total / 1e5) / 10,
    busyPct: pct(busy),
    areas: [...areas].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) => ({ area: k, pct: pct(v) })),
    functions: [...fns].sort((a, b) => b[1] - a[1]).filter(([k]) => !k.startsWith('(idle)')).slice(0, top).map(([k, v]) => ({ fn: k, pct: pct(v) })),
  };
}
