import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { CHROMIUM, chromiumFor, enterCode, phoneTab, requestCode, screenshot, shows, signIn, tabKey } from "./helpers/browser.ts";
import { writeLimits } from "../src/limits/limit-values.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// The landing page and the dashboard as a person uses them, in Debian's Chromium driven by
// playwright-core: what the landing page tells a user of the deployment, sign-in with the code from
// the dev outbox, the balance and activity after a request, a sandbox top-up (and none offered by
// a server that takes no payments), keys created and revoked, the tables at phone width;
// sign-out. The playground: test/playground-browser.test.ts. With DOCS_SCREENSHOTS=1 it also saves
// each page into docs/screenshots/ (desktop and phone widths).

const chromiumAvailable = chromiumFor("the dashboard browser tests");

let server: TestServer;
let browser: Browser | undefined;
let context: BrowserContext;
let page: Page;
let outbox: string;
const pageErrors: string[] = [];

/** The README's shell commands: the developers' (install and start, run the tests), not a user's. */
const README_COMMANDS = [...(await Bun.file(new URL("../README.md", import.meta.url)).text()).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.trim()).slice(0, 2);

describe.skipIf(!chromiumAvailable)("the dashboard in Chromium", () => {
  beforeAll(async () => {
    outbox = mkdtempSync(join(tmpdir(), "voxroute-outbox-"));
    // With the TTS cache (off in other tests' servers): a repeated request's cached characters show in its activity row.
    server = await startTestServer({ SANDBOX_PAYMENTS: "true", DEV_OUTBOX_DIR: outbox, TTS_CACHE_BYTES: String(16 * 1024 * 1024) });
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

  test("signed out, / shows a user the API's address, its reference and a sign-in, not the developers' commands; signing in goes to the dashboard", async () => {
    await page.goto(`${server.url}/`);
    const main = page.locator("main");
    await shows(main.getByTestId("api-base"), server.url);
    expect(await main.getByRole("link", { name: "API reference" }).getAttribute("href")).toBe("/docs");
    await main.getByRole("button", { name: "Send me a code" }).waitFor();
    const text = (await main.textContent()) ?? "";
    expect(README_COMMANDS).toHaveLength(2);
    for (const command of README_COMMANDS) expect(text).not.toContain(command);
    await screenshot(context, page, "landing");
    await requestCode(page, server.url, "ada@example.com");
    // Where a server without a mail server keeps the code is the operator's business.
    await main.getByLabel("Code").waitFor();
    expect(await main.getByRole("region", { name: "Sign in" }).textContent()).not.toContain("outbox");
    await enterCode(page, server.url, outbox, "ada@example.com");
    // The key stays in the tab, never in the address.
    expect(await tabKey(page)).toStartWith("vxr_");
    expect(page.url()).not.toContain("vxr_");
  }, 30_000);

  test("the dashboard: the welcome grant with its targets; a request shows in activity, usage and the balance", async () => {
    await page.goto(`${server.url}/dashboard`);
    const grants = page.getByRole("table", { name: "Promotional grants" });
    await shows(grants.getByRole("row").nth(1), /welcome\$1\.00.*flite \/ \*/);

    const speech = connect(server.wsUrl("/v1/tts?model=flite&voice=slt"), bearer(await tabKey(page)));
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
    await screenshot(context, page, "dashboard");
  }, 30_000);

  test("a request the TTS cache served shows its cached characters in its activity row, and the usage its cache savings", async () => {
    await page.goto(`${server.url}/dashboard`);
    const speech = connect(server.wsUrl("/v1/tts?model=flite&voice=slt"), bearer(await tabKey(page)));
    speech.send({ type: "text", text: "Hello from the dashboard test." });
    speech.send({ type: "close" });
    expect((await speech.closed).close.code).toBe(1000);
    await page.locator("form[aria-label='Activity filters']").getByRole("button", { name: "Refresh" }).click();
    await shows(page.getByTestId("activity").getByRole("row").nth(1), /TTS.*completed.*30 characters · 30 from the cache/);
    await page.reload();
    await shows(page.getByTestId("cache-savings"), /Cache savings: 30 of \d+ characters were played from the TTS cache/);
  }, 30_000);

  test("the account's pronunciation dictionaries are listed", async () => {
    await page.goto(`${server.url}/dashboard`);
    const list = page.getByRole("region", { name: "Pronunciation dictionaries" });
    await shows(list, "No dictionaries yet");
    const res = await fetch(`${server.url}/v1/pronunciation-dictionaries`, {
      method: "POST",
      headers: { ...bearer(await tabKey(page)), "content-type": "application/json" },
      body: JSON.stringify({ name: "brand names", rules: [{ type: "alias", string_to_replace: "voxroute", alias: "vox root" }] }),
    });
    const made = (await res.json()) as { id: string; version_id: string };
    await page.reload();
    await shows(page.getByTestId("dictionaries").getByRole("row").nth(1), `brand names${made.id}1${made.version_id}`);
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

  test("a server that takes no payments offers no top-up: the dashboard says why", async () => {
    const unpaidOutbox = mkdtempSync(join(tmpdir(), "voxroute-outbox-"));
    const unpaid = await startTestServer({ DEV_OUTBOX_DIR: unpaidOutbox });
    const tab = await context.newPage();
    try {
      await signIn(tab, unpaid.url, unpaidOutbox, "grace@example.com");
      const topUp = tab.getByRole("region", { name: "Top up" });
      await shows(topUp, "This server takes no payments");
      expect(await topUp.getByRole("button", { name: "Top up" }).count()).toBe(0);
      expect(await topUp.getByLabel(/Amount/).count()).toBe(0);
    } finally {
      await tab.close();
      await unpaid.stop(0);
      rmSync(unpaidOutbox, { recursive: true, force: true });
    }
  }, 30_000);

  test("at phone width the tables fit: the last column of grants, transactions and keys is on screen, the activity scrolls in its own box", async () => {
    await page.goto(`${server.url}/dashboard`);
    const phone = await phoneTab(context, page);
    try {
      /** The box of the first row's last cell of `table` and of the box the table scrolls in; `scrolled`: once that box is scrolled to the cell. */
      const boxes = async (table: ReturnType<Page["getByRole"]>, scrolled = false) => {
        const cell = table.getByRole("row").nth(1).getByRole("cell").last();
        if (scrolled) await cell.scrollIntoViewIfNeeded();
        const scroller = table.locator("xpath=ancestor::div[contains(@class, 'scroll')][1]");
        return { cell: (await cell.boundingBox())!, scroller: (await scroller.boundingBox())! };
      };
      const within = (inner: { x: number; width: number }, outer: { x: number; width: number }) => inner.x >= outer.x - 0.5 && inner.x + inner.width <= outer.x + outer.width + 0.5;
      const viewport = { x: 0, width: 390 };
      for (const name of ["Promotional grants", "Credit transactions, newest first", "API keys, newest first"]) {
        const table = phone.getByRole("table", { name });
        await table.getByRole("row").nth(1).waitFor();
        const { cell, scroller } = await boxes(table);
        expect([name, within(cell, viewport), within(cell, scroller)]).toEqual([name, true, true]);
      }
      const activity = phone.getByRole("table", { name: "Requests, newest first" });
      await activity.getByRole("row").nth(1).waitFor();
      const { cell, scroller } = await boxes(activity, true);
      expect([within(scroller, viewport), within(cell, scroller)]).toEqual([true, true]);
      expect(await phone.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)).toBe(390);
    } finally {
      await phone.close();
    }
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

  test("keys: each with its limits and spend beside it; one made with a budget and a session limit shows them, one above the account's is refused", async () => {
    const tabsKey = await tabKey(page);
    const [{ tenant_id }] = await server.ctx.database.sql.query<{ tenant_id: string }>("SELECT tenant_id FROM api_keys WHERE prefix = ?", [tabsKey.slice(0, 12)]);
    await writeLimits(server.ctx.database.sql, tenant_id!, undefined, { usd_per_month: 20 });
    await page.goto(`${server.url}/dashboard`);
    await shows(page.getByTestId("account-limits"), /Account limits: \$20\.00 a month\. Used: \$[\d.]+ today · \$[\d.]+ this month/);
    const keys = page.getByTestId("keys");
    await shows(keys.getByRole("row").filter({ hasText: tabsKey.slice(0, 12) }), /none\$[\d.]+ today/);

    await page.getByLabel("Budget per month (USD)").fill("25");
    await page.getByRole("button", { name: "Create a key" }).click();
    await shows(page.getByRole("alert"), "usd_per_month may not be above the account's own (20) (invalid_request)");
    expect(await page.getByTestId("new-key").count()).toBe(0);

    await page.getByLabel("Budget per month (USD)").fill("");
    await page.getByLabel("Budget per day (USD)").fill("0.5");
    await page.getByLabel("Sessions at once").fill("2");
    await page.getByRole("button", { name: "Create a key" }).click();
    const key = await page.getByTestId("new-key").inputValue();
    const row = keys.getByRole("row").filter({ hasText: key.slice(0, 12) });
    await shows(row.getByRole("cell").nth(3), "$0.50 a day · 2 sessions at once");
    await shows(row.getByRole("cell").nth(4), "$0.00 today · $0.00 this month");
    expect(await page.getByLabel("Budget per day (USD)").inputValue()).toBe("");
    await page.getByRole("button", { name: "Done" }).click();
    const [{ limits }] = await server.ctx.database.sql.query<{ limits: string }>("SELECT limits FROM api_keys WHERE prefix = ?", [key.slice(0, 12)]);
    expect(JSON.parse(limits!)).toEqual({ usd_per_day: 0.5, max_sessions: 2 });
  }, 30_000);

  test("every form control of every page has a name a screen reader reads, and the skip link leads to the content", async () => {
    for (const path of ["/", "/dashboard", "/playground"]) {
      await page.goto(`${server.url}${path}`);
      await page.waitForLoadState("networkidle");
      const unnamed = await page.evaluate(() =>
        [...(globalThis as any).document.querySelectorAll("input, select, textarea, button")]
          .filter((el: any) => {
            const labelled = el.labels?.length || el.getAttribute("aria-label") || el.getAttribute("aria-labelledby");
            return !labelled && !(el.tagName === "BUTTON" && el.textContent?.trim());
          })
          .map((el: any) => el.outerHTML.slice(0, 120)),
      );
      expect([path, unnamed]).toEqual([path, []]);
      await page.keyboard.press("Tab");
      expect(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent)).toBe("Skip to content");
      await page.keyboard.press("Enter");
      // The fragment reaches playwright as a navigation event of its own, after the key press.
      await page.waitForURL((url) => url.pathname === path && url.hash === "#main");
    }
  }, 30_000);

  test("signing out revokes the tab's key and forgets it", async () => {
    const key = await tabKey(page);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Send me a code" }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem("voxroute.session"))).toBeNull();
    expect((await fetch(`${server.url}/account/balance`, { headers: bearer(key) })).status).toBe(401);
    expect(pageErrors).toEqual([]);
  }, 30_000);
});
