import { existsSync, mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const SCREENSHOTS = resolve(import.meta.dirname, "../../../../docs/screenshots");

/**
 * Debian's Chromium driven by playwright-core. Missing Chromium is a failure that says what to
 * install, never a skip: the browser tests are the dashboard's evidence.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is missing: ${CHROMIUM} does not exist. Install Debian's chromium package (apt-get install -y chromium; infra/local/setup.sh should do it) to run the dashboard browser tests.`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Playwright starts every launch with a fresh temporary profile (user-data dir).
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}

export async function newPage(browser: Browser): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  return context.newPage();
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: resolve(SCREENSHOTS, `${name}.png`) });
}
