/** One source of truth per rule: ids and severities live in the registry, and one constructor makes a finding. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeFinding } from '../src/analysis/finding.js';
import { RULES } from '../src/analysis/rules/index.js';
import { connectionOwner, requestOwner } from '../src/analysis/owner.js';

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

describe('rule registry', () => {
  it('no rule id or severity is typed outside its rule file (src/analysis/rules/)', () => {
    const offenders: string[] = [];
    for (const file of sources('src')) {
      if (file.startsWith(join('src', 'analysis', 'rules'))) continue;
      const text = readFileSync(file, 'utf8');
      // A finding's id as code ("rule: 'capture-gap'", "id: 'capture-gap'"); examples in help texts do not count.
      for (const rule of RULES) {
        if (new RegExp(`\\b(rule|id)\\s*:\\s*'${rule.id}'`).test(text)) offenders.push(`${file}: ${rule.id}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('makeFinding takes id and severity from the rule', () => {
    const rule = { ...RULES[0]!, severity: 'info' as const };
    const at = {
      frame: 3, timeUs: 7, client: 'c', broker: 'b', apiKey: 18, apiVersion: 4, correlationId: 1, clientInstanceId: null, input: 0,
    };
    expect(makeFinding(rule, 'm', at)).toEqual({ rule: rule.id, severity: 'info', message: 'm', ...at });
  });
});

describe('owner', () => {
  it('a request belongs to its header ID, else to the connection', () => {
    expect(requestOwner('a', 'b')).toBe('a');
    expect(requestOwner(null, 'b')).toBe('b');
    expect(requestOwner(null, null)).toBe(null);
  });
  it('a connection belongs to its first header ID, else its telemetry ID', () => {
    expect(connectionOwner(['x', 'y'], 't')).toEqual({ id: 'x', source: 'header' });
    expect(connectionOwner([], 't')).toEqual({ id: 't', source: 'telemetry' });
    expect(connectionOwner([], null)).toEqual({ id: null, source: 'none' });
  });
});
