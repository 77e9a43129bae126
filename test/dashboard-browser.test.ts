import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from "playwright-core";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// The dashboard as a person uses it, in Debian's Chromium driven by playwright-core: sign-in with
// the code from the dev outbox, the balance and activity after a request, a sandbox top-up, keys
// created and revoked, sign-out. With DOCS_SCREENSHOTS=1 it also saves each page into
// docs/screenshots/ (desktop and phone widths).

const CHROMIUM = "/usr/bin/chromium";
const chromiumAvailable = existsSync(CHROMIUM);
if (!chromiumAvailable) {
  if (process.env.REQUIRE_CHROMIUM === "1") throw new Error(`Chromium is required (REQUIRE_CHROMIUM=1) but ${CHROMIUM} is missing`);
  console.warn(`skipping the dashboard browser tests: no ${CHROMIUM}`);
}
const SCREENSHOTS = process.env.DOCS_SCREENSHOTS === "1" ? new URL("../docs/screenshots/", import.meta.url).pathname : undefined;

let server: TestServer;
let browser: Browser | undefined;
let context: BrowserContext;
let page: Page;
let outbox: string;
const pageErrors: string[] = [];

/** The code of the newest mail to `email` in the dev outbox. */
async function codeFor(email: string): Promise<string> {
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

/** Waits (up to 10 s) until the element's text has `expected` (a string to contain, or a pattern); says what it had on timeout. */
async function shows(locator: Locator, expected: string | RegExp): Promise<void> {
  let text = "";
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await Bun.sleep(50)) {
    text = (await locator.count()) ? ((await locator.first().textContent()) ?? "") : "";
    if (typeof expected === "string" ? text.includes(expected) : expected.test(text)) return;
  }
  throw new Error(`expected ${expected} in ${JSON.stringify(text)}`);
}

/** The key this tab signed in with (sessionStorage). */
const tabKey = () => page.evaluate(() => JSON.parse(sessionStorage.getItem("voxroute.session")!).key as string);

async function screenshot(name: string) {
  if (!SCREENSHOTS) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  const phone = await context.newPage();
  await phone.setViewportSize({ width: 390, height: 844 });
  await phone.goto(page.url());
  await phone.waitForLoadState("networkidle");
  await phone.screenshot({ path: join(SCREENSHOTS, `${name}-phone.png`), fullPage: true });
  await phone.close();
}

async function signIn(email: string) {
  await page.goto(`${server.url}/`);
  await page.getByLabel("E-mail address").fill(email);
  await page.getByRole("button", { name: "Send me a code" }).click();
  await page.getByLabel("Code").fill(await codeFor(email));
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: `Signed in as ${email}` }).waitFor();
}

describe.skipIf(!chromiumAvailable)("the dashboard in Chromium", () => {
  beforeAll(async () => {
    outbox = mkdtempSync(join(tmpdir(), "voxroute-outbox-"));
    server = await startTestServer({ SANDBOX_PAYMENTS: "true", DEV_OUTBOX_DIR: outbox });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
    context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    page = await context.newPage();
    page.on("pageerror", (e) => void pageErrors.push(e.message));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop(0);
    if (outbox) rmSync(outbox, { recursive: true, force: true });
  });

  test("signed out, / shows the README's commands and a sign-in; the code from the dev outbox signs in", async () => {
    await page.goto(`${server.url}/`);
    await shows(page.locator("pre code").first(), "bun run start");
    await screenshot("landing");
    await signIn("ada@example.com");
    // The key stays in the tab, never in the address.
    expect(await tabKey()).toStartWith("vxr_");
    expect(page.url()).not.toContain("vxr_");
  }, 30_000);

  test("the dashboard: the welcome grant with its targets; a request shows in activity, usage and the balance", async () => {
    await page.goto(`${server.url}/dashboard`);
    const grants = page.getByRole("table", { name: "Promotional grants" });
    await shows(grants.getByRole("row").nth(1), /welcome\$1\.00.*flite \/ \*/);

    const speech = connect(server.wsUrl("/v1/tts?model=flite&voice=slt"), bearer(await tabKey()));
    speech.send({ type: "text", text: "Hello from the dashboard test." });
    speech.send({ type: "close" });
    expect((await speech.closed).close.code).toBe(1000);

    await page.getByRole("button", { name: "Refresh" }).first().click();
    await page.locator("form[aria-label='Activity filters']").getByRole("button", { name: "Refresh" }).click();
    const row = page.getByTestId("activity").getByRole("row").nth(1);
    await shows(row, /flite.*cmu\/flite.*slt.*TTS.*completed.*30 characters/);
    // The grant paid for it: less than $1 left.
    await shows(grants.getByRole("row").nth(1), /welcome\$0\.99/);
    // Filtered to STT, the TTS request is not listed.
    await page.getByLabel("Capability").selectOption("stt");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.getByText("No requests in this range.").waitFor();
    await page.getByLabel("Capability").selectOption("");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.getByText("As a table").click();
    await shows(page.getByTestId("usage").getByRole("row").nth(1), /^\d{4}-\d{2}-\d{2}1\$0\.00/);
    await screenshot("dashboard");
  }, 30_000);

  test("a sandbox top-up: the link opens the checkout, paying it adds the credits, shown once the tab has the focus back", async () => {
    await page.goto(`${server.url}/dashboard`);
    await page.getByLabel("Amount in USD (5 to 1000)").fill("12.5");
    const [checkout] = await Promise.all([context.waitForEvent("page"), page.getByRole("button", { name: "Top up" }).click()]);
    await checkout.waitForLoadState();
    await checkout.getByRole("button", { name: "Pay 12.50 USD" }).click();
    await checkout.getByText("12.50 USD of credits were added.").waitFor();
    await checkout.close();
    await page.bringToFront();
    await page.evaluate(() => (globalThis as any).dispatchEvent(new Event("focus")));
    await shows(page.getByTestId("paid-usd"), "$12.50");
    await shows(page.getByTestId("transactions").getByRole("row").nth(1), "top-up$12.50");
  }, 30_000);

  test("keys: one created is shown once and works; revoked after a confirmation, it no longer does", async () => {
    await page.goto(`${server.url}/dashboard`);
    await page.getByRole("button", { name: "Create a key" }).click();
    const key = await page.getByTestId("new-key").inputValue();
    expect(key).toStartWith("vxr_");
    expect((await fetch(`${server.url}/account/balance`, { headers: bearer(key) })).status).toBe(200);
    const keys = page.getByTestId("keys");
    await keys.getByText(`${key.slice(0, 12)}…`).waitFor();
    await page.getByRole("button", { name: "Done" }).click();
    expect(await page.getByTestId("new-key").count()).toBe(0);

    await keys.getByRole("button", { name: `Revoke ${key.slice(0, 12)}…` }).click();
    await keys.getByRole("button", { name: `Revoke ${key.slice(0, 12)}…` }).click();
    await shows(keys.getByRole("row").filter({ hasText: key.slice(0, 12) }), "revoked");
    expect((await fetch(`${server.url}/account/balance`, { headers: bearer(key) })).status).toBe(401);
  }, 30_000);

  test("signing out revokes the tab's key and forgets it", async () => {
    const key = await tabKey();
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Send me a code" }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem("voxroute.session"))).toBeNull();
    expect((await fetch(`${server.url}/account/balance`, { headers: bearer(key) })).status).toBe(401);
    expect(pageErrors).toEqual([]);
  }, 30_000);
});
