import { readFileSync } from 'node:fs';
import { repoPath } from './proc.ts';

const ROOT = repoPath('');

/**
 * Summarises a V8 .cpuprofile: self time per function and per "area" (our code by file, each npm
 * package, Node internals, garbage collection, idle), and per owner (the same, with native and
 * Node-internal time charged to its caller), as shares of the sampled time.
 */
type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number; children?: number[] };
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };

function area(url: string, fn: string): string {
  if (fn === '(garbage collector)') return 'GC';
  if (fn === '(idle)') return 'idle';
  if (fn === '(program)') return 'program (native)';
  if (!url) return 'native/builtin';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return `npm:${pkg[1]}`;
  if (url.startsWith('node:')) return 'node internals';
  const path = url.replace('file://', '');
  return path.startsWith(ROOT) ? path.slice(ROOT.length) : url;
}

export function summariseProfile(path: string, top = 12) {
  const p = JSON.parse(readFileSync(path, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0));
  const total = [...self.values()].reduce((a, b) => a + b, 0) || 1;
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Who caused the time: native and Node-internal work charged to the nearest package or file of ours
  // up the stack (a socket write to the package that wrote, GC stays GC).
  const owner = (id: number): string => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const n = byId.get(at)!;
      const a = area(n.callFrame.url, n.callFrame.functionName);
      if (a === 'GC' || a === 'idle' || a.startsWith('npm:') || !/^(native\/builtin|node internals|program \(native\))$/.test(a)) return a;
    }
    return area(byId.get(id)!.callFrame.url, byId.get(id)!.callFrame.functionName);
  };
  const fns = new Map<string, number>();
  const areas = new Map<string, number>();
  const owners = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const a = area(n.callFrame.url, n.callFrame.functionName);
    areas.set(a, (areas.get(a) ?? 0) + us);
    const o = owner(id);
    owners.set(o, (owners.get(o) ?? 0) + us);
    const key = `${n.callFrame.functionName || '(anonymous)'} ${a}:${n.callFrame.lineNumber + 1}`;
    fns.set(key, (fns.get(key) ?? 0) + us);
  }
  const pct = (us: number) => Math.round((us / total) * 1000) / 10;
  const busy = total - (areas.get('idle') ?? 0);
  return {
    sampledS: Math.round(total / 1e5) / 10,
    busyPct: pct(busy),
    areas: [...areas].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) => ({ area: k, pct: pct(v) })),
    /** Self time charged to the nearest package or file of ours up the stack. */
    owners: [...owners].sort((a, b) => b[1] - a[1]).filter(([k]) => k !== 'idle').slice(0, top).map(([k, v]) => ({ area: k, pct: pct(v) })),
    functions: [...fns].sort((a, b) => b[1] - a[1]).filter(([k]) => !k.startsWith('(idle)')).slice(0, top).map(([k, v]) => ({ fn: k, pct: pct(v) })),
  };
}
