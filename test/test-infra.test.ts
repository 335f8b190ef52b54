/**
 * The test suite's own machinery (test/helpers.ts, test/skip-report.ts, test/builder/capture.ts):
 * a golden that is missing fails, skips are named and counted and fail CI unless allowed, Chromium
 * is found where puppeteer users keep it, and scratch folders carry this run's name.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scratchPrefix, tmpDir } from './builder/capture.js';
import { checkGolden, expectSameBytes, findChromium, skipUnless } from './helpers.js';
import { isCi, notAllowed, skipLines, type Allowed, type Skip } from './skip-report.js';

describe('checkGolden', () => {
  it('fails on a missing golden instead of writing it', () => {
    expect(() => checkGolden('no-such-golden.txt', 'anything', {})).toThrow(/^test\/golden\/no-such-golden\.txt is missing: UPDATE_GOLDEN=1/);
  });

  it('fails when the output differs from the golden, and passes when it is the same', () => {
    const text = readFileSync(new URL('./golden/kip1313-mix.table.txt', import.meta.url), 'utf8');
    expect(() => checkGolden('kip1313-mix.table.txt', `${text}x`, {})).toThrow();
    checkGolden('kip1313-mix.table.txt', text, {});
  });

  it('refuses UPDATE_GOLDEN=1 under CI', () => {
    expect(() => checkGolden('kip1313-mix.table.txt', 'x', { UPDATE_GOLDEN: '1', CI: 'true' })).toThrow(/under CI/);
  });
});

describe('skips', () => {
  const skips: Skip[] = [
    { file: 'test/a.test.ts', name: 'tshark > agrees on x', reason: 'no tshark' },
    { file: 'test/a.test.ts', name: 'tshark > agrees on y', reason: 'no tshark' },
    { file: 'test/b.test.ts', name: 'errors > an unreadable file', reason: 'root' },
  ];

  it('are listed by reason, each test named, and counted', () => {
    expect(skipLines(skips)).toEqual([
      '3 tests skipped:',
      '  2 because no tshark:',
      '    test/a.test.ts > tshark > agrees on x',
      '    test/a.test.ts > tshark > agrees on y',
      '  1 because root:',
      '    test/b.test.ts > errors > an unreadable file',
    ]);
    expect(skipLines([])).toEqual(['No test skipped.']);
  });

  it('fail CI unless the allow-list names their file and test (or its start)', () => {
    const allowed: Allowed[] = [{ file: 'test/b.test.ts', test: 'errors > an unreadable', reason: 'root reads anything' }];
    expect(notAllowed(skips, allowed)).toEqual(skips.slice(0, 2));
    expect(notAllowed(skips, [...allowed, { file: 'test/b.test.ts', test: 'tshark', reason: 'wrong file' }])).toEqual(skips.slice(0, 2));
    expect(notAllowed(skips, [...allowed, { file: 'test/a.test.ts', test: 'tshark > ', reason: 'the suite' }])).toEqual([]);
    expect([isCi({ CI: 'true' }), isCi({ CI: '1' }), isCi({}), isCi({ CI: '' }), isCi({ CI: 'false' }), isCi({ CI: '0' })]).toEqual([true, true, false, false, false, false]);
  });

  it('the allow-list is short and gives a reason for each entry', () => {
    const list = JSON.parse(readFileSync(new URL('./skips-allowed.json', import.meta.url), 'utf8')) as { allowed: Allowed[] };
    expect(list.allowed.length).toBeLessThanOrEqual(5);
    for (const a of list.allowed) {
      expect(Object.keys(a)).toEqual(['file', 'test', 'reason']);
      expect(readFileSync(a.file, 'utf8')).toContain(a.test.split(' > ').at(-1)!);
      expect(a.reason.length).toBeGreaterThan(20);
    }
  });

  it('skipUnless gives vitest the skip and the reporter the reason', () => {
    expect(skipUnless(false, 'why')).toEqual({ skip: true, meta: { skipReason: 'why' } });
    expect(skipUnless(1, 'why')).toEqual({ skip: false, meta: { skipReason: 'why' } });
  });
});

describe('findChromium', () => {
  it('takes CHROME_PATH, PUPPETEER_EXECUTABLE_PATH or CHROMIUM when set, and only that', () => {
    const dir = tmpDir();
    const chrome = join(dir, 'my-chrome');
    writeFileSync(chrome, '');
    expect(findChromium({ CHROME_PATH: chrome, PATH: '' })).toBe(chrome);
    expect(findChromium({ PUPPETEER_EXECUTABLE_PATH: chrome, PATH: '' })).toBe(chrome);
    expect(findChromium({ CHROMIUM: chrome, PATH: '' })).toBe(chrome);
    expect(findChromium({ CHROME_PATH: join(dir, 'missing'), PATH: '/usr/bin' })).toBeNull();
  });

  it('looks on the PATH, then in puppeteer\'s cache', () => {
    const bin = tmpDir();
    const empty = tmpDir();
    writeFileSync(join(bin, 'chromium-browser'), '');
    expect(findChromium({ PATH: `${empty}:${bin}`, PUPPETEER_CACHE_DIR: empty })).toBe(join(bin, 'chromium-browser'));
    const cache = tmpDir();
    const inCache = join(cache, 'chrome', 'linux-131.0.6778.204', 'chrome-linux64', 'chrome');
    mkdirSync(join(inCache, '..'), { recursive: true });
    writeFileSync(inCache, '');
    chmodSync(inCache, 0o755);
    expect(findChromium({ PATH: empty, PUPPETEER_CACHE_DIR: cache })).toBe(inCache);
    expect(findChromium({ PATH: empty, PUPPETEER_CACHE_DIR: empty })).toBeNull();
  });
});

describe('scratch folders', () => {
  it('carry the name of this npm test run, so that its teardown finds what a file left', () => {
    expect(scratchPrefix({ KCID_TEST_RUN: '123abc' })).toBe('kcid-test-123abc-');
    expect(process.env.KCID_TEST_RUN).toMatch(/^\d+[0-9a-f]{6}$/);
    expect(tmpDir()).toContain(`/${scratchPrefix()}`);
  });
});

describe('expectSameBytes', () => {
  it('passes on the same bytes and names the first difference otherwise', () => {
    const a = Buffer.alloc(3 << 20, 7);
    expectSameBytes(a, Buffer.from(a));
    const b = Buffer.from(a);
    b[1_000_000] = 8;
    expect(() => expectSameBytes(a, b)).toThrow();
    expect(() => expectSameBytes(a, a.subarray(1))).toThrow();
  });
});
