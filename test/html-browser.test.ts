/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The page in a real browser: headless Chromium (Debian's `chromium`, driven by puppeteer-core;
 * nothing downloads a browser) opens the reports of the bundled capture, recorded captures and a
 * capture of hostile ClientIds from file:// and checks what a person would: no console errors, no
 * network requests, the timeline's lanes and marks as the JSON report predicts them, sorting and
 * filtering by clicking, tooltips on focus, hostile ClientIds as text, no horizontal overflow at
 * 1280x800 and at 390x844, and the same SVG and tables with scripts off. Screenshots go to
 * test-output/html/ (git-ignored).
 *
 * Chromium is found as puppeteer users expect (CHROME_PATH, PUPPETEER_EXECUTABLE_PATH or CHROMIUM;
 * else chromium, chromium-browser or google-chrome on the PATH; else puppeteer's cache: findChromium
 * in helpers.ts); without one the tests are skipped and listed so. CI installs it (.ci/run).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TICKS_PER_CONNECTION } from '../src/analysis/activity.js';
import { removeTmpFiles } from './builder/capture.js';
import { HOSTILE_ATTR, HOSTILE_IMG, HOSTILE_SCRIPT, htmlScenario } from './fixtures/html-scenario.js';
import { findChromium, runKcid, skipUnless } from './helpers.js';

const CHROMIUM = findChromium();

const OUT = resolve(__dirname, '../test-output/html');

interface Json {
  summary: { requests: number };
  instances: { clientInstanceId: string | null; requests: number; connections: number }[];
  connections: { requests: number }[];
  findings: { rule: string; severity: string; frame: number | null; time: string | null; client: string | null }[];
}

interface Opened {
  page: Page;
  consoleErrors: string[];
  requests: string[];
  dialogs: string[];
}

afterAll(removeTmpFiles);

describe('the html report in Chromium', skipUnless(CHROMIUM !== null, 'no Chromium: none named by CHROME_PATH, PUPPETEER_EXECUTABLE_PATH or CHROMIUM, on the PATH or in puppeteer\'s cache (Debian: apt-get install chromium)'), () => {
  let browser: Browser;
  const pages = new Map<string, { file: string; json: Json }>();

  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    const hostile = htmlScenario().file('hostile-page.pcap');
    const sources: [string, string][] = [
      ['bundled', 'fixtures/kip1313-mix.pcapng'],
      ['kcat-consumer-group', 'fixtures/kcat-mock-consumer-group.pcapng'],
      ['kafkajs-group', 'fixtures/kafkajs-mock-group.pcap'],
      ['ckjs-telemetry', 'fixtures/ckjs-mock-telemetry.pcap'],
      ['hostile', hostile],
    ];
    for (const [name, capture] of sources) {
      const html = await runKcid(['analyze', capture, '--format', 'html', '--fail-on', 'none']);
      const json = await runKcid(['analyze', capture, '--format', 'json', '--fail-on', 'none']);
      expect(html.stderr).toBe('');
      const file = join(OUT, `${name}.html`);
      writeFileSync(file, html.stdout);
      pages.set(name, { file, json: JSON.parse(json.stdout) as Json });
    }
    const puppeteer = (await import('puppeteer-core')).default;
    browser = await puppeteer.launch({
      executablePath: CHROMIUM!,
      headless: true,
      // Root in a container: Chromium's sandbox needs user namespaces it may not have.
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--font-render-hinting=none'],
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  async function open(name: string, viewport = { width: 1280, height: 800 }, javascript = true): Promise<Opened> {
    const page = await browser.newPage();
    const o: Opened = { page, consoleErrors: [], requests: [], dialogs: [] };
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warn') o.consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => o.consoleErrors.push(String(e)));
    page.on('request', (r) => o.requests.push(r.url()));
    page.on('dialog', (d) => {
      o.dialogs.push(d.message());
      void d.dismiss();
    });
    await page.setJavaScriptEnabled(javascript);
    await page.setViewport(viewport);
    await page.goto(pathToFileURL(pages.get(name)!.file).href, { waitUntil: 'load' });
    return o;
  }

  const NAMES = ['bundled', 'kcat-consumer-group', 'kafkajs-group', 'ckjs-telemetry', 'hostile'];

  it.each(NAMES)('%s: no console errors, no request but the page itself, the marks the JSON predicts', async (name) => {
    const { json, file } = pages.get(name)!;
    const o = await open(name);
    const counts = await o.page.evaluate(() => ({
      lanes: document.querySelectorAll('#timeline .lane[data-kind="instance"]').length,
      ids: [...document.querySelectorAll('#timeline .lane[data-kind="instance"]')].map((l) => l.getAttribute('data-instance')),
      unassigned: document.querySelectorAll('#timeline .lane[data-kind="unassigned"]').length,
      ticks: document.querySelectorAll('#timeline .tick').length,
      markers: document.querySelectorAll('#timeline .marker').length,
      findingRows: document.querySelectorAll('#findings-table tbody tr').length,
      instanceRows: document.querySelectorAll('#instances-table tbody tr').length,
      rateCharts: document.querySelectorAll('svg.rate').length,
    }));
    expect(o.consoleErrors).toEqual([]);
    expect(o.dialogs).toEqual([]);
    expect(o.requests).toEqual([pathToFileURL(file).href]);
    expect(counts.lanes).toBe(json.instances.length);
    expect(counts.ids).toEqual(json.instances.map((i) => i.clientInstanceId));
    // Connections in no instance (a TLS connection is grouped under its client's address) share one lane.
    expect(counts.unassigned).toBe(json.connections.length > json.instances.reduce((n, i) => n + i.connections, 0) ? 1 : 0);
    expect(counts.ticks).toBe(json.connections.reduce((n, c) => n + Math.min(c.requests, MAX_TICKS_PER_CONNECTION), 0));
    expect(counts.markers).toBe(json.findings.filter((f) => f.client !== null && f.time !== null).length);
    expect(counts.findingRows).toBe(json.findings.length);
    expect(counts.instanceRows).toBe(json.instances.length);
    expect(counts.rateCharts).toBeGreaterThan(0);
    await o.page.close();
  });

  it('the bundled capture: 9 lanes (one per instance, the TLS client among them), 27 ticks (one per request)', async () => {
    const o = await open('bundled');
    const n = await o.page.evaluate(() => [document.querySelectorAll('#timeline .lane[data-kind="instance"]').length, document.querySelectorAll('#timeline .tick').length]);
    expect(n).toEqual([9, 27]);
    await o.page.close();
  });

  it.each([
    [1280, 800],
    [390, 844],
  ])('%ix%i: no horizontal overflow; screenshots written', async (width, height) => {
    for (const name of NAMES) {
      const o = await open(name, { width, height });
      const overflow = await o.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow, name).toBe(0);
      await o.page.screenshot({ path: join(OUT, `${name}-${width}x${height}.png`) as `${string}.png`, fullPage: true });
      await o.page.close();
    }
  });

  it('sorting by clicking a column header, both ways', async () => {
    const o = await open('bundled');
    const frames = () => o.page.$$eval('#findings-table tbody tr', (rows) => rows.map((r) => Number(r.cells[2]!.getAttribute('data-sort'))));
    const before = await frames();
    const header = (await o.page.$$('#findings-table thead th button'))[2]!;
    await header.click();
    const asc = await frames();
    expect(asc).toEqual([...before].sort((a, b) => a - b));
    await header.click();
    expect(await frames()).toEqual([...before].sort((a, b) => b - a));
    expect(await o.page.$eval('#findings-table thead th:nth-child(3)', (th) => th.getAttribute('aria-sort'))).toBe('descending');
    // The severity column sorts errors first (its data-sort is the rank), text columns alphabetically.
    const rule = (await o.page.$$('#findings-table thead th button'))[1]!;
    await rule.click();
    const rules = await o.page.$$eval('#findings-table tbody tr', (rows) => rows.map((r) => r.getAttribute('data-rule')!));
    expect(rules).toEqual([...rules].sort());
    await o.page.close();
  });

  it('filtering by rule and by severity', async () => {
    const { json } = pages.get('bundled')!;
    const o = await open('bundled');
    const visible = () => o.page.$$eval('#findings-table tbody tr', (rows) => rows.filter((r) => !r.hidden && getComputedStyle(r).display !== 'none').length);
    expect(await visible()).toBe(json.findings.length);
    await o.page.select('#filter-rule', 'client-id-after-first');
    expect(await visible()).toBe(json.findings.filter((f) => f.rule === 'client-id-after-first').length);
    expect(await o.page.$eval('#findings-shown', (e) => e.textContent)).toBe(`2 of ${json.findings.length} shown`);
    await o.page.select('#filter-rule', '');
    await o.page.select('#filter-severity', 'warning');
    expect(await visible()).toBe(json.findings.filter((f) => f.severity === 'warning').length);
    await o.page.select('#filter-rule', 'capture-gap');
    expect(await visible()).toBe(0);
    await o.page.close();
  });

  it('focusing a tick shows its frame, API and correlation ID', async () => {
    const o = await open('bundled');
    // SVG elements take focus (tabindex) but puppeteer's focus() wants an HTMLElement.
    await o.page.$eval('#timeline .tick', (t) => (t as SVGElement).focus());
    expect(await o.page.evaluate(() => document.activeElement?.classList.contains('tick'))).toBe(true);
    const tip = await o.page.$eval('#tip', (t) => ({ text: t.textContent, shown: getComputedStyle(t).display }));
    expect(tip.shown).toBe('block');
    expect(tip.text).toMatch(/^frame 4 · ApiVersions v4 · corr 1\n10\.2\.0\.21:40001 -> 10\.1\.0\.11:9092\n2025-12-01T00:00:00\.000300Z · no error, 100 µs$/);
    // Notes are drawn first, errors last (on top): the first error's mark.
    await o.page.hover('#timeline .marker-error');
    expect(await o.page.$eval('#tip', (t) => t.textContent)).toMatch(/^error telemetry-payload-invalid · PushTelemetry v1 · corr 4\nframe 17 · /);
    await o.page.close();
  });

  it('hostile ClientIds stay text: no dialog, no script runs, no element made', async () => {
    const o = await open('hostile');
    const seen = await o.page.evaluate(() => ({
      pwned: (window as unknown as { __pwned?: number }).__pwned,
      images: document.images.length,
      scripts: document.scripts.length,
      clientIds: [...document.querySelectorAll('#instances-table tbody tr')].map((r) => (r as HTMLTableRowElement).cells[2]!.textContent),
      handlers: [...document.querySelectorAll('*')].filter((e) => [...e.attributes].some((a) => a.name.startsWith('on'))).length,
    }));
    // Hover over every lane label and mark, where an onmouseover would fire.
    for (const el of await o.page.$$('#timeline [tabindex]')) await el.hover();
    expect(o.dialogs).toEqual([]);
    expect(o.consoleErrors).toEqual([]);
    expect(seen.pwned).toBeUndefined();
    expect(seen.images).toBe(0);
    expect(seen.scripts).toBe(1);
    expect(seen.handlers).toBe(0);
    expect(seen.clientIds).toEqual([HOSTILE_IMG, HOSTILE_SCRIPT, HOSTILE_ATTR]);
    await o.page.close();
  });

  it('with scripts on, the titles become aria-labels (one tooltip, also for screen readers)', async () => {
    const o = await open('bundled');
    const n = await o.page.evaluate(() => [document.querySelectorAll('#timeline [tabindex] > title').length, document.querySelectorAll('#timeline [aria-label][tabindex]').length]);
    expect(n[0]).toBe(0);
    expect(n[1]).toBeGreaterThan(27);
    await o.page.close();
  });

  it('prints: the filter controls are hidden, and Chromium makes a PDF of it', async () => {
    const o = await open('bundled');
    await o.page.emulateMediaType('print');
    expect(await o.page.$eval('.controls', (c) => getComputedStyle(c).display)).toBe('none');
    const pdf = await o.page.pdf({ format: 'A4' });
    expect(Buffer.from(pdf).subarray(0, 5).toString()).toBe('%PDF-');
    await o.page.close();
  });

  it('with scripts off the SVG and the tables are all there (and the filter controls are not shown)', async () => {
    const { json } = pages.get('bundled')!;
    const o = await open('bundled', { width: 1280, height: 800 }, false);
    const n = await o.page.evaluate(() => ({
      lanes: document.querySelectorAll('#timeline .lane[data-kind="instance"]').length,
      ticks: document.querySelectorAll('#timeline .tick').length,
      rows: document.querySelectorAll('#findings-table tbody tr').length,
      controls: getComputedStyle(document.querySelector('.controls')!).display,
      titles: document.querySelectorAll('#timeline title').length,
      labels: document.querySelectorAll('#timeline [aria-label][tabindex]').length,
    }));
    expect(n).toEqual({ lanes: json.instances.length, ticks: json.summary.requests, rows: json.findings.length, controls: 'none', titles: n.titles, labels: 0 });
    // Every connection bar, tick and marker has its tooltip as a <title>.
    expect(n.titles).toBeGreaterThanOrEqual(json.connections.length + json.summary.requests);
    await o.page.close();
  });
});
