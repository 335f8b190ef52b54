// The README's picture of the page: the bundled capture's report, its timeline and the top of the
// rate charts, at 1100 px in headless Chromium. Run after `npm run build`:
//   node scripts/html-screenshot.mjs [/path/to/chromium]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';

const chromium = process.argv[2] ?? '/usr/bin/chromium';
const dir = mkdtempSync(join(tmpdir(), 'kcid-shot-'));
const page = join(dir, 'report.html');
let html;
try {
  html = execFileSync('node', ['bin/kcid', 'analyze', 'fixtures/kip1313-mix.pcapng', '--format', 'html'], { encoding: 'utf8' });
} catch (e) {
  html = e.stdout; // exit 1: the bundled capture holds findings on purpose
}
writeFileSync(page, html);
const browser = await puppeteer.launch({ executablePath: chromium, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
try {
  const tab = await browser.newPage();
  await tab.setViewport({ width: 1100, height: 800 });
  await tab.goto(`file://${page}`);
  const y = await tab.$eval('#timeline', (e) => e.getBoundingClientRect().top + window.scrollY);
  await tab.screenshot({ path: 'docs/html-report.png', clip: { x: 0, y: y - 8, width: 1100, height: 620 } });
} finally {
  await browser.close();
  rmSync(dir, { recursive: true, force: true });
}
