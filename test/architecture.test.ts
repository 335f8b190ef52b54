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

  it('no two modules of cli/ import each other', () => {
    const cli = join(SRC, 'cli');
    const edges = new Set<string>();
    for (const file of sources(cli)) {
      for (const spec of imports(file)) {
        if (!spec.startsWith('./')) continue;
        edges.add(`${relative(cli, file)} ${spec.slice(2).replace(/\.js$/, '.ts')}`);
      }
    }
    const cycles = [...edges].filter((e) => edges.has(e.split(' ').reverse().join(' ')));
    expect(cycles).toEqual([]);
  });
});
