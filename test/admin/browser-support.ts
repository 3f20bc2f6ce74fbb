import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { FastifyInstance } from 'fastify';
import { after, before } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { adminSurface } from '../../src/admin/surface.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import type { UserRole } from '../../src/domain/users/users.ts';
import { createOrigin } from '../../src/platform/http/origin.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { testServices } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { createTestUser, testPassword } from './support.ts';

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

/**
 * For a browser test file: a database with a site and a user of `role` in it, the admin origin on
 * a free port, and Chromium; all stopped after the file. `signIn` opens the app as that user.
 * `env` adds configuration to the admin origin's (e.g. a shorter idle limit).
 */
export function useAdminInBrowser(role: UserRole, env: NodeJS.ProcessEnv = {}): {
  readonly db: TestDatabase;
  readonly site: SiteContext;
  readonly url: string;
  readonly browser: Browser;
  signIn(page: Page): Promise<void>;
} {
  const state = {} as { db: TestDatabase; site: SiteContext; url: string; browser: Browser; admin: FastifyInstance; email: string };
  before(async () => {
    state.db = await createTestDatabase();
    state.site = await createTestSite(state.db.database);
    state.email = (await createTestUser(state.db.database, role === 'service-admin' ? null : state.site, role)).email;
    // No DICOMweb origin here: the study page says its images cannot be shown.
    state.admin = await createOrigin(adminSurface, testServices(state.db.database, { CG_DICOMWEB_PORT: '', ...env }));
    state.url = await state.admin.listen({ host: '127.0.0.1', port: 0 });
    state.browser = await launchChromium();
  });
  after(async () => {
    await state.browser?.close();
    await state.admin?.close();
    await state.db?.drop();
  });
  return {
    get db() { return state.db; },
    get site() { return state.site; },
    get url() { return state.url; },
    get browser() { return state.browser; },
    async signIn(page) {
      await page.goto(`${state.url}/`);
      await page.getByLabel('E-mail').fill(state.email);
      await page.getByLabel('Password').fill(testPassword);
      await page.getByRole('button', { name: 'Sign in' }).click();
    },
  };
}
