/**
 * The shape of src/cli/ (issue 25): one module per command with a plan and a run, a small table of
 * commands, and no circle of imports of any length among the modules.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../src/cli/commands.js';

const CLI = resolve(__dirname, '../src/cli');
const modules = readdirSync(CLI).filter((f) => f.endsWith('.ts'));
const importsOf = (file: string): string[] =>
  [...readFileSync(join(CLI, file), 'utf8').matchAll(/(?:from|import)\s*\(?\s*'\.\/([^']+)\.js'/g)].map((m) => `${m[1]}.ts`);

describe('src/cli', () => {
  it('has no circle of imports, however long', () => {
    const graph = new Map(modules.map((m) => [m, importsOf(m)]));
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (m: string, path: string[]): void => {
      state.set(m, 'open');
      for (const next of graph.get(m) ?? []) {
        if (state.get(next) === 'open') circles.push([...path.slice(path.indexOf(next)), next].join(' -> '));
        else if (state.get(next) === undefined) visit(next, [...path, next]);
      }
      state.set(m, 'done');
    };
    for (const m of modules) if (!state.has(m)) visit(m, [m]);
    expect(circles).toEqual([]);
  });

  it('commands.ts is the table of commands, each a module of its own with a plan and a run', () => {
    expect(readFileSync(join(CLI, 'commands.ts'), 'utf8').split('\n').length).toBeLessThanOrEqual(300);
    expect(Object.keys(COMMANDS)).toEqual(['analyze', 'requests', 'clients', 'export', 'merge', 'telemetry']);
    for (const c of Object.values(COMMANDS)) expect([typeof c.plan, typeof c.run]).toEqual(['function', 'function']);
    // No command module imports another command's module, or the table.
    for (const m of modules.filter((f) => f.endsWith('-command.ts'))) expect([m, importsOf(m).filter((i) => i.endsWith('-command.ts') || i === 'commands.ts')]).toEqual([m, []]);
  });
});
