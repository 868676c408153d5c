import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { findRepoRoot } from "@agentnet/local-backends";
import { type Browser, chromium, type Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const SCREENSHOTS = join(findRepoRoot(), "docs", "screenshots");

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

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/**
 * What axe-core finds against WCAG 2 A and AA on the page as it is now, one line per violation
 * and element. Evaluated through the DevTools protocol, so the page's CSP does not stand in its way.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (...args: unknown[]) => Promise<AxeResults> } }).axe;
    const results = await axe.run(document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] },
    });
    return results.violations.flatMap((violation) =>
      violation.nodes.map(
        (node) => `${violation.id}: ${node.target.join(" ")} (${node.failureSummary ?? ""})`,
      ),
    );
  });
}

interface AxeResults {
  violations: { id: string; nodes: { target: string[]; failureSummary?: string }[] }[];
}
