import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { BrowserContext, Locator, Page } from "playwright-core";

// The site's pages in Debian's Chromium driven by playwright-core (test/dashboard-browser.test.ts,
// test/playground-browser.test.ts): signing in with the code from the dev outbox, waiting for
// what a page shows, and the docs screenshots (DOCS_SCREENSHOTS=1).

export const CHROMIUM = "/usr/bin/chromium";

/** Whether Chromium is here; its absence fails with REQUIRE_CHROMIUM=1 and otherwise skips `what`. */
export function chromiumFor(what: string): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.REQUIRE_CHROMIUM === "1") throw new Error(`Chromium is required (REQUIRE_CHROMIUM=1) but ${CHROMIUM} is missing`);
  console.warn(`skipping ${what}: no ${CHROMIUM}`);
  return false;
}

const SCREENSHOTS = process.env.DOCS_SCREENSHOTS === "1" ? new URL("../../docs/screenshots/", import.meta.url).pathname : undefined;

/** The code of the newest mail to `email` in the dev outbox. */
export async function codeFor(outbox: string, email: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const mail = readdirSync(outbox)
      .filter((f) => f.endsWith(`${email}.eml`))
      .sort()
      .at(-1);
    const code = mail && /\b(\d{6})\b/.exec(readFileSync(join(outbox, mail), "utf8"))?.[1];
    if (code) return code;
    await Bun.sleep(50);
  }
  throw new Error(`no code for ${email} in ${outbox}`);
}

/** Waits (up to `waitMs`) until the element's text has `expected` (a string to contain, or a pattern); says what it had on timeout. */
export async function shows(locator: Locator, expected: string | RegExp, waitMs = 10_000): Promise<void> {
  let text = "";
  for (const deadline = Date.now() + waitMs; Date.now() < deadline; await Bun.sleep(50)) {
    text = (await locator.count()) ? ((await locator.first().textContent()) ?? "") : "";
    if (typeof expected === "string" ? text.includes(expected) : expected.test(text)) return;
  }
  throw new Error(`expected ${expected} in ${JSON.stringify(text)}`);
}

/** Asks the landing page of `base` for a sign-in code for `email`. */
export async function requestCode(page: Page, base: string, email: string): Promise<void> {
  await page.goto(`${base}/`);
  await page.getByLabel("E-mail address").fill(email);
  await page.getByRole("button", { name: "Send me a code" }).click();
}

/** Enters the code mailed to the dev outbox; the page goes on to the dashboard. */
export async function enterCode(page: Page, base: string, outbox: string, email: string): Promise<void> {
  // The keyboard alone signs in: Enter submits the code.
  await page.getByLabel("Code").fill(await codeFor(outbox, email));
  await page.getByLabel("Code").press("Enter");
  await page.waitForURL(`${base}/dashboard`);
  await page.getByRole("heading", { name: "Dashboard", level: 1 }).waitFor();
}

/** Signs in on the landing page of `base` with the code mailed to the dev outbox, and lands on the dashboard. */
export async function signIn(page: Page, base: string, outbox: string, email: string): Promise<void> {
  await requestCode(page, base, email);
  await enterCode(page, base, outbox, email);
}

/** The key this tab signed in with (sessionStorage). */
export const tabKey = (page: Page) => page.evaluate(() => JSON.parse(sessionStorage.getItem("voxroute.session")!).key as string);

/** A new tab of `context` at phone width (390 × 844), signed in as `page` is: sessionStorage is the tab's. */
export async function phoneTab(context: BrowserContext, page: Page): Promise<Page> {
  const phone = await context.newPage();
  await phone.setViewportSize({ width: 390, height: 844 });
  const session = await page.evaluate(() => sessionStorage.getItem("voxroute.session"));
  if (session) await phone.addInitScript((s) => sessionStorage.setItem("voxroute.session", s), session);
  await phone.goto(page.url());
  await phone.waitForLoadState("networkidle");
  return phone;
}

/** With DOCS_SCREENSHOTS=1, the page as it is into docs/screenshots/`name`.png, and at phone width into `name`-phone.png. */
export async function screenshot(context: BrowserContext, page: Page, name: string): Promise<void> {
  if (!SCREENSHOTS) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  const phone = await phoneTab(context, page);
  await phone.screenshot({ path: join(SCREENSHOTS, `${name}-phone.png`), fullPage: true });
  await phone.close();
}
