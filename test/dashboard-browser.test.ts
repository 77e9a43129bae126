import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from "playwright-core";
import { type FakeApp, LONG_ANSWER, startFakeApp } from "./fakes/conversation-relay-app.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { concat, silence, speak, wavFile } from "./helpers/speech.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// The dashboard and the playground as a person uses them, in Debian's Chromium driven by
// playwright-core: sign-in with the code from the dev outbox, the balance and activity after a
// request, a sandbox top-up, keys created and revoked; speech played into Web Audio, the fake
// microphone (a WAV of speech) transcribed and heard in a realtime conversation that it talks
// over, the voice browser; sign-out. With DOCS_SCREENSHOTS=1 it also saves each page into
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
let app: FakeApp;

/**
 * What the fake microphone says, from the start of each capture: a question, then, 7 s later,
 * words that talk over the long answer of a realtime conversation. Chromium loops the file; the
 * silence after it outlasts every test.
 */
const CALLER = () => concat([silence(3000), speak("Thank you very much for your help."), silence(7000), speak("Thank you, that is all."), silence(40_000)]);
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
  // sessionStorage is the tab's: the phone-sized tab is handed the same sign-in.
  const session = await page.evaluate(() => sessionStorage.getItem("voxroute.session"));
  if (session) await phone.addInitScript((s) => sessionStorage.setItem("voxroute.session", s), session);
  await phone.goto(page.url());
  await phone.waitForLoadState("networkidle");
  await phone.screenshot({ path: join(SCREENSHOTS, `${name}-phone.png`), fullPage: true });
  await phone.close();
}

async function signIn(email: string) {
  await page.goto(`${server.url}/`);
  await page.getByLabel("E-mail address").fill(email);
  await page.getByRole("button", { name: "Send me a code" }).click();
  // The keyboard alone signs in: Enter submits the code.
  await page.getByLabel("Code").fill(await codeFor(email));
  await page.getByLabel("Code").press("Enter");
  await page.getByRole("heading", { name: `Signed in as ${email}` }).waitFor();
}

describe.skipIf(!chromiumAvailable)("the dashboard in Chromium", () => {
  beforeAll(async () => {
    outbox = mkdtempSync(join(tmpdir(), "voxroute-outbox-"));
    server = await startTestServer({ SANDBOX_PAYMENTS: "true", DEV_OUTBOX_DIR: outbox });
    app = startFakeApp();
    writeFileSync(join(outbox, "caller.wav"), wavFile(CALLER()));
    // http://127.0.0.1 is a secure context: getUserMedia and AudioWorklet are allowed.
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream", `--use-file-for-fake-audio-capture=${join(outbox, "caller.wav")}`, "--autoplay-policy=no-user-gesture-required"],
    });
    context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    page = await context.newPage();
    page.on("pageerror", (e) => void pageErrors.push(e.message));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop(0);
    app?.stop();
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

  test("TTS playground: Flite's speech streamed into Web Audio, the time to first audio shown, the request as code", async () => {
    await page.goto(`${server.url}/playground`);
    await page.getByLabel("Provider", { exact: true }).selectOption({ label: "Flite (embedded)" });
    await page.getByLabel("Voice", { exact: true }).selectOption("awb");
    await page.getByLabel("Text", { exact: true }).fill("The playground speaks as the audio arrives.");
    await page.getByRole("button", { name: "Speak" }).click();
    await shows(page.getByTestId("tts-state"), "flite (cmu/flite)");
    await shows(page.getByTestId("ttfa"), /^\d+ ms$/);
    // About 2.5 s of 16 kHz speech reached Web Audio, and its analyser heard it.
    await shows(page.getByTestId("tts-samples"), /^[1-9]\d{4,}$/);
    for (let i = 0; i < 100 && Number(await page.getByTestId("tts-peak").getAttribute("data-peak")) < 0.05; i++) await Bun.sleep(100);
    expect(Number(await page.getByTestId("tts-peak").getAttribute("data-peak"))).toBeGreaterThan(0.05);
    const snippet = await page.getByTestId("tts-snippet").textContent();
    expect(snippet).toContain("/v1/tts?model=cmu%2Fflite&provider=flite&voice=awb");
    expect(snippet).toContain("The playground speaks as the audio arrives.");
    expect(snippet).not.toContain(await tabKey());
    await page.getByRole("tab", { name: "Python (websockets)" }).click();
    await shows(page.getByTestId("tts-snippet"), "websockets.connect(");
    await screenshot("playground");
  }, 30_000);

  test.skipIf(!localSttAvailable)(
    "STT playground: the microphone transcribed, the router VAD's turn signals on the timeline",
    async () => {
      await page.goto(`${server.url}/playground`);
      await page.getByRole("button", { name: "Start the microphone" }).click();
      await shows(page.getByTestId("stt-transcript"), "thank you very much for your help");
      await shows(page.getByTestId("stt-marks"), /started[\s\S]*final “thank you very much for your help”[\s\S]*end/);
      await page.getByRole("button", { name: "Stop" }).click();
      await shows(page.getByTestId("stt-state"), "closed");
      expect(await page.getByRole("alert").filter({ hasText: /\S/ }).count()).toBe(0);
    },
    30_000,
  );

  test.skipIf(!localSttAvailable)(
    "realtime playground: a profile heard and answered through a client secret; the caller talks over the long answer, which stops",
    async () => {
      const res = await fetch(`${server.url}/v1/realtime/profiles`, {
        method: "POST",
        headers: { ...bearer(await tabKey()), "content-type": "application/json" },
        body: JSON.stringify({ name: "opening hours", pipeline: { stt: { model: "pocketsphinx" }, tts: { model: "flite", voice: "slt" }, upstream: { url: app.url("/long") } } }),
      });
      const { id } = (await res.json()) as { id: string };
      await page.goto(`${server.url}/playground`);
      await page.getByLabel("Realtime profile").selectOption(id);
      await page.getByRole("button", { name: "Talk" }).click();
      const conversation = page.locator(".conversation");
      await shows(conversation, "You: thank you very much for your help");
      await shows(conversation, `Answer: ${LONG_ANSWER.slice(0, 20)}`);
      await shows(conversation, "(interrupted)");
      // The words that talked over it are a turn of their own.
      for (let i = 0; i < 200 && (await conversation.locator("li.caller").count()) < 2; i++) await Bun.sleep(50);
      expect(await conversation.locator("li.caller").count()).toBe(2);
      await page.getByRole("button", { name: "Hang up" }).click();
      await shows(page.getByTestId("rt-state"), "ended");
    },
    40_000,
  );

  test("voice browser: search, a facet, a preview, and a voice put into the TTS form", async () => {
    await page.goto(`${server.url}/playground`);
    await page.getByRole("searchbox", { name: "Search voices" }).fill("scottish");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await shows(page.getByTestId("voice-count"), /^[1-4] voices?$/);
    await shows(page.locator(".voice-list"), "AWB (Scottish English, male)");
    await page.getByRole("searchbox", { name: "Search voices" }).fill("");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    // Every voice: Flite's, Pico's and eSpeak NG's, over a hundred.
    await shows(page.getByTestId("voice-count"), /^\d{3,} voices$/);
    await page
      .getByRole("group", { name: "Gender" })
      .getByRole("checkbox", { name: /Female/ })
      .check();
    await shows(page.getByTestId("voice-count"), /^([2-9]|1\d) voices$/);
    const female = Number((await page.getByTestId("voice-count").textContent())!.split(" ")[0]);
    expect(female).toBeGreaterThan(1);
    expect(female).toBeLessThan(20);
    const preview = page.waitForResponse((r) => r.url().includes("/v1/voices/preview"));
    await page.getByRole("button", { name: "Play a preview of SLT (US English, female)" }).click();
    expect((await preview).headers()["content-type"]).toBe("audio/mpeg");
    await page.getByRole("button", { name: "Use SLT (US English, female) in text to speech" }).click();
    expect(await page.getByLabel("Voice", { exact: true }).inputValue()).toBe("slt");
    expect(await page.getByLabel("Model", { exact: true }).inputValue()).toBe("cmu/flite");
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
      expect(page.url()).toEndWith(`${path}#main`);
    }
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
