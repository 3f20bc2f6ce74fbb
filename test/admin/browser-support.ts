import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type Page } from 'playwright-core';

export const screenshotDir = join(import.meta.dirname, '../../test-artifacts/screenshots');

/** Debian's Chromium, headless, with nothing that reaches the network (never a downloaded browser). */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * Console errors and uncaught exceptions of a page. The browser's own "Failed to load resource"
 * line for an HTTP error status is kept apart: the tests provoke some (a wrong AE title, a
 * revoked key) on purpose, and those are answers, not script errors.
 */
export function watchConsole(page: Page): { errors: string[]; httpErrors: string[] } {
  const seen = { errors: [] as string[], httpErrors: [] as string[] };
  page.on('console', (message) => {
    if (message.type() !== 'error' && message.type() !== 'warning') return;
    if (/^Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())) seen.httpErrors.push(message.text());
    else seen.errors.push(`${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => seen.errors.push(`uncaught: ${error.message}`));
  return seen;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(screenshotDir, { recursive: true });
  await page.screenshot({ path: join(screenshotDir, `${name}.png`), fullPage: true });
}

/** True when nothing on the page is wider than the viewport (no sideways scrolling). */
export async function fitsWidth(page: Page): Promise<boolean> {
  // The callback runs in the page; this project's type-check has no DOM library.
  return page.evaluate(() => {
    const root = (globalThis as any).document.documentElement;
    return root.scrollWidth <= root.clientWidth + 1;
  });
}

/**
 * WCAG 2.1 A and AA rules of axe-core on the page as it is now; one line per violation (rule,
 * impact, the first offending elements), empty when the page passes.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return result.violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
}
