import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";
import { startTestServer, type TestServer } from "./helpers/server.ts";

// The API reference page in headless Chromium (Debian's, as test/el-conversation-browser.test.ts
// drives it) with every request that does not go to the server on loopback blocked: the page
// must load all it needs from the router and show the operations.

const CHROMIUM = "/usr/bin/chromium";
const chromiumAvailable = existsSync(CHROMIUM);
if (!chromiumAvailable) {
  if (process.env.REQUIRE_CHROMIUM === "1") throw new Error(`Chromium is required (REQUIRE_CHROMIUM=1) but ${CHROMIUM} is missing`);
  console.warn(`skipping the API reference page test: no ${CHROMIUM}`);
}

const isLoopback = (url: string) => ["127.0.0.1", "localhost", "[::1]"].includes(new URL(url).hostname);

describe.skipIf(!chromiumAvailable)("the API reference page, offline", () => {
  let server: TestServer;
  let browser: Browser;
  beforeAll(async () => {
    server = await startTestServer();
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop(0);
  });

  test("/swagger and /swagger/ lead to /docs", async () => {
    for (const path of ["/swagger", "/swagger/"]) {
      const res = await fetch(`${server.url}${path}`, { redirect: "manual" });
      expect([res.status, res.headers.get("location")]).toEqual([302, "/docs"]);
    }
  });

  test("/swagger/ in the browser: the page at /docs, every file from the router, the operations shown", async () => {
    const context = await browser.newContext();
    const blocked: string[] = [];
    const failed: string[] = [];
    const errors: string[] = [];
    const requests: string[] = [];
    await context.route("**/*", (route) => {
      const url = route.request().url();
      if (isLoopback(url)) return route.continue();
      blocked.push(url);
      return route.abort();
    });
    const page = await context.newPage();
    page.on("response", (res) => void (res.status() >= 400 && failed.push(`${res.status()} ${res.url()}`)));
    page.on("pageerror", (err) => void errors.push(err.message));
    page.on("console", (m) => void (m.type() === "error" && errors.push(`console: ${m.text()}`)));
    page.on("requestfinished", (req) => void requests.push(new URL(req.url()).pathname));
    await page.goto(`${server.url}/swagger/`);
    expect(new URL(page.url()).pathname).toBe("/docs");
    const shown = await page
      .getByText("Provider catalogue", { exact: true })
      .waitFor({ timeout: 60_000 })
      .then(() => true)
      .catch(() => false);
    expect({ shown, blocked, failed, errors, requests }).toMatchObject({ shown: true, blocked: [], failed: [], errors: [] });
    await page.getByText("Streaming text to speech (WebSocket)", { exact: true }).waitFor();
    expect(await page.getByText("ElevenLabs-compatible TTS (whole file)", { exact: true }).count()).toBe(1);
    expect({ blocked, failed, errors }).toEqual({ blocked: [], failed: [], errors: [] });
    expect(requests).toEqual(expect.arrayContaining(["/docs", "/docs/swagger-ui-bundle.js", "/docs/swagger-ui.css", "/openapi.json"]));
    await context.close();
  }, 90_000);

  test("/docs leads back to the site: its link to / opens the landing page, still offline", async () => {
    const context = await browser.newContext();
    const blocked: string[] = [];
    await context.route("**/*", (route) => {
      if (isLoopback(route.request().url())) return route.continue();
      blocked.push(route.request().url());
      return route.abort();
    });
    const page = await context.newPage();
    await page.goto(`${server.url}/docs`);
    await page.getByText("Provider catalogue", { exact: true }).waitFor({ timeout: 60_000 });
    await page.getByRole("navigation", { name: "Site" }).getByRole("link", { name: "voxroute", exact: true }).click();
    await page.waitForURL(`${server.url}/`);
    await page.getByRole("heading", { name: "voxroute", level: 1 }).waitFor();
    expect(blocked).toEqual([]);
    await context.close();
  }, 90_000);
});
