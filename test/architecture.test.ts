/**
 * The stages import downwards only (README, Design): base/ is the floor every stage may use, and each
 * stage may import the stages below it, never one above. A new folder must be given its place here.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(__dirname, '../src');
/** Lowest first. Folders on one level may not import each other. */
const LEVELS: readonly (readonly string[])[] = [['base'], ['capture'], ['net'], ['tcp'], ['tls'], ['kafka'], ['telemetry'], ['analysis'], ['report', 'show'], ['export'], ['cli']];

function levelOf(folder: string): number {
  const i = LEVELS.findIndex((l) => l.includes(folder));
  if (i < 0) throw new Error(`src/${folder}/ has no level in test/architecture.test.ts`);
  return i;
}

function* sources(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* sources(p);
    else if (name.endsWith('.ts')) yield p;
  }
}

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]!);
}

describe('architecture', () => {
  it('every import points down the stages (or stays in its own folder)', () => {
    const upward: string[] = [];
    for (const file of sources(SRC)) {
      const from = relative(SRC, file).split('/')[0]!;
      for (const spec of imports(file)) {
        const to = relative(SRC, resolve(dirname(file), spec)).split('/')[0]!;
        if (to === from) continue;
        if (levelOf(to) >= levelOf(from)) upward.push(`${relative(SRC, file)} -> ${spec}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('no import circle anywhere in src/ (type-only imports included)', () => {
    expect(importCircles(moduleGraph(SRC))).toEqual([]);
  });

  it('the circle finder finds a circle of any length, and none in a chain', () => {
    const graph = new Map<string, string[]>([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts', 'd.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['e.ts']],
      ['e.ts', []],
      ['f.ts', ['f.ts']],
      ['g.ts', ['d.ts']],
    ]);
    expect(importCircles(graph)).toEqual(['a.ts -> b.ts -> c.ts -> a.ts (3 modules: a.ts, b.ts, c.ts)', 'f.ts -> f.ts (1 modules: f.ts)']);
    expect(importCircles(new Map([['x.ts', ['y.ts']], ['y.ts', []]]))).toEqual([]);
  });
});

/** Every module of `root` (path relative to it) and the modules of `root` it imports. */
function moduleGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(root)) {
    const to: string[] = [];
    for (const spec of imports(file)) {
      const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
      if (!target.startsWith(root + '/')) continue;
      to.push(relative(root, target));
    }
    graph.set(relative(root, file), to);
  }
  return graph;
}

/**
 * The import circles of a module graph: Tarjan's strongly connected components, and for each one of
 * more than one module (or a module importing itself) one circle through it, shown from its first
 * module in name order, so a failure names the path to cut.
 */
function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      components.push(component);
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  const circles: string[] = [];
  for (const component of components) {
    const members = new Set(component);
    const start = [...component].sort()[0]!;
    if (component.length === 1 && !(graph.get(start) ?? []).includes(start)) continue;
    circles.push(`${circleThrough(graph, members, start).join(' -> ')} (${component.length} modules: ${[...component].sort().join(", ")})`);
  }
  return circles.sort();
}

/** The shortest path from `start` back to itself inside one component (breadth first). */
function circleThrough(graph: ReadonlyMap<string, readonly string[]>, members: ReadonlySet<string>, start: string): string[] {
  const from = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i]!;
    for (const w of [...(graph.get(v) ?? [])].sort()) {
      if (!members.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let u = v; u !== start; u = from.get(u)!) path.splice(1, 0, u);
        return [...path, start];
      }
      if (!from.has(w)) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}
