import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { type FakeApp, LONG_ANSWER, startFakeApp } from "./fakes/conversation-relay-app.ts";
import { CHROMIUM, chromiumFor, screenshot, shows, signIn, tabKey } from "./helpers/browser.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { concat, silence, speak, wavFile } from "./helpers/speech.ts";
import { bearer } from "./helpers/ws-client.ts";

// The playground as a person uses it, in Debian's Chromium driven by playwright-core: speech
// played into Web Audio, run after run; the fake microphone (a WAV of speech) transcribed, and
// heard in a realtime conversation that it talks over; a microphone refused; the voice browser.
// With DOCS_SCREENSHOTS=1 it also saves the page into docs/screenshots/.

const chromiumAvailable = chromiumFor("the playground browser tests");

let server: TestServer;
let browser: Browser | undefined;
let context: BrowserContext;
let page: Page;
let outbox: string;
let app: FakeApp;
const pageErrors: string[] = [];

/**
 * What the fake microphone says, from the start of each capture: a question, then, 7 s later,
 * words that talk over the long answer of a realtime conversation. Chromium loops the file; the
 * silence after it outlasts every test.
 */
const CALLER = () => concat([silence(3000), speak("Thank you very much for your help."), silence(7000), speak("Thank you, that is all."), silence(40_000)]);

/** A realtime profile of the tab's account whose application is the fake app at `path`. */
async function profileFor(path: string): Promise<string> {
  const res = await fetch(`${server.url}/v1/realtime/profiles`, {
    method: "POST",
    headers: { ...bearer(await tabKey(page)), "content-type": "application/json" },
    body: JSON.stringify({ name: `opening hours ${path}`, pipeline: { stt: { model: "pocketsphinx" }, tts: { model: "flite", voice: "slt" }, upstream: { url: app.url(path) } } }),
  });
  return ((await res.json()) as { id: string }).id;
}

describe.skipIf(!chromiumAvailable)("the playground in Chromium", () => {
  beforeAll(async () => {
    outbox = mkdtempSync(join(tmpdir(), "voxroute-outbox-"));
    server = await startTestServer({ DEV_OUTBOX_DIR: outbox });
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
    await signIn(page, server.url, outbox, "ada@example.com");
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop(0);
    app?.stop();
    if (outbox) rmSync(outbox, { recursive: true, force: true });
  });

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
    expect(snippet).not.toContain(await tabKey(page));
    await page.getByRole("tab", { name: "Python (websockets)" }).click();
    await shows(page.getByTestId("tts-snippet"), "websockets.connect(");
    await screenshot(context, page, "playground");
  }, 30_000);

  test("TTS playground: a new run's figures are its own, neither overwritten by the run before nor given its level", async () => {
    await page.goto(`${server.url}/playground`);
    await page.getByLabel("Provider", { exact: true }).selectOption({ label: "Flite (embedded)" });
    await page.getByLabel("Text", { exact: true }).fill("The first run speaks for a few seconds, loud enough to be heard.");
    await page.getByRole("button", { name: "Speak" }).click();
    for (let i = 0; i < 100 && Number(await page.getByTestId("tts-peak").getAttribute("data-peak")) < 0.05; i++) await Bun.sleep(100);
    expect(Number(await page.getByTestId("tts-peak").getAttribute("data-peak"))).toBeGreaterThan(0.05);
    // Every figure shown from the second run's start (empty text, so no audio) on.
    await page.evaluate(() => {
      const tab = globalThis as any;
      const read = (id: string) => tab.document.querySelector(`[data-testid=${id}]`);
      const figures = () => `${read("tts-samples")?.textContent} ${read("tts-peak")?.getAttribute("data-peak")} ${read("tts-state")?.textContent}`;
      tab.shown = [];
      new tab.MutationObserver(() => tab.shown.push(figures())).observe(tab.document.querySelector("main"), { subtree: true, childList: true, characterData: true, attributes: true });
    });
    await page.getByLabel("Text", { exact: true }).fill("");
    await page.getByRole("button", { name: "Speak" }).click();
    await shows(page.getByTestId("tts-state"), "done");
    // The first run's meter read the level every 200 ms for seconds after it ended: a second holds five of its rounds.
    await Bun.sleep(1000);
    const all = (await page.evaluate(() => (globalThis as any).shown)) as string[];
    const shown = all.slice(all.findIndex((s) => s.endsWith(" connecting")));
    expect(shown.length).toBeGreaterThan(1);
    expect([...new Set(shown)]).toEqual(["0 0 connecting", "0 0 done"]);
    expect(await page.getByRole("alert").filter({ hasText: /\S/ }).count()).toBe(0);
  }, 30_000);

  test.skipIf(!localSttAvailable)(
    "STT playground: the microphone transcribed, the router VAD's turn signals and the finals on the timeline in the order of their times",
    async () => {
      await page.goto(`${server.url}/playground`);
      await page.getByRole("button", { name: "Start the microphone" }).click();
      // A loaded machine recognizes late: it is the order and the words that are checked, not how soon.
      await shows(page.getByTestId("stt-transcript"), "thank you very much for your help", 30_000);
      // Both of the caller's turns, the second 7 s after the first.
      await shows(page.getByTestId("stt-marks"), /final “thank you that is all”[\s\S]*end/, 40_000);
      await page.getByRole("button", { name: "Stop" }).click();
      await shows(page.getByTestId("stt-state"), "closed");
      const marks = await page.getByTestId("stt-marks").locator("li").allTextContents();
      expect(marks.join("\n")).toMatch(/started\n.*final “thank you very much for your help”.*\n.*end\n.*started\n.*final “thank you that is all”.*\n.*end/);
      const times = marks.map((m) => Number.parseFloat(m));
      expect(times.every(Number.isFinite)).toBe(true);
      expect(times).toEqual([...times].sort((a, b) => a - b));
      // A final is where the speech of its turn began, not the start of the session.
      const [started, final] = [marks.findIndex((m) => m.endsWith("started")), marks.findIndex((m) => m.includes("final"))];
      expect(times[final]).toBeGreaterThanOrEqual(times[started]!);
      expect(times[started]).toBeGreaterThan(2);
      expect(await page.getByRole("alert").filter({ hasText: /\S/ }).count()).toBe(0);
    },
    90_000,
  );

  test.skipIf(!localSttAvailable)(
    "realtime playground: a profile heard and answered through a client secret; the caller talks over the long answer, which stops and shows what was heard",
    async () => {
      const id = await profileFor("/long");
      await page.goto(`${server.url}/playground`);
      await page.getByLabel("Realtime profile").selectOption(id);
      await page.getByRole("button", { name: "Talk" }).click();
      const conversation = page.locator(".conversation");
      await shows(conversation, "You: thank you very much for your help", 30_000);
      await shows(conversation, `Answer: ${LONG_ANSWER.slice(0, 20)}`, 30_000);
      await shows(conversation, "(interrupted)", 30_000);
      // What the caller had time to hear, as the application was told it, is the answer shown as
      // heard; the rest of its text is marked as not heard.
      const told = () => app.connections.filter((c) => c.path === "/long").flatMap((c) => c.received.filter((m) => m.type === "interrupt"));
      for (let i = 0; i < 200 && told().length === 0; i++) await Bun.sleep(50);
      expect(told()).toHaveLength(1);
      const spoken = String(told()[0]!.utteranceUntilInterrupt);
      expect(spoken.length).toBeLessThan(LONG_ANSWER.length);
      const answer = conversation.locator("li.answer");
      const heardPart = await answer.evaluate((li) => {
        const copy = li.cloneNode(true) as typeof li;
        for (const unheard of copy.querySelectorAll(".unheard")) unheard.remove();
        return copy.textContent?.replace(/\s+/g, " ").trim();
      });
      expect(heardPart).toBe(`Answer: ${spoken} (interrupted)`.replace(/\s+/g, " "));
      expect(await answer.locator(".unheard").textContent()).toBe(`not heard: ${LONG_ANSWER.slice(spoken.length).trim()}`);
      // The words that talked over it are a turn of their own.
      for (let i = 0; i < 200 && (await conversation.locator("li.caller").count()) < 2; i++) await Bun.sleep(50);
      expect(await conversation.locator("li.caller").count()).toBe(2);
      await page.getByRole("button", { name: "Hang up" }).click();
      await shows(page.getByTestId("rt-state"), "ended");
    },
    90_000,
  );

  test("realtime playground with the microphone refused: it says so, and leaves no conversation open", async () => {
    const id = await profileFor("/silent");
    // A Chromium with no fake microphone and no permission for one.
    const refusing = await chromium.launch({ executablePath: CHROMIUM, headless: true });
    try {
      const tab = await refusing.newPage();
      const session = await page.evaluate(() => sessionStorage.getItem("voxroute.session"));
      await tab.addInitScript((s) => sessionStorage.setItem("voxroute.session", s!), session);
      // Every WebSocket the page makes, to see whether it is left open.
      await tab.addInitScript(() => {
        const page = globalThis as any;
        const sockets: WebSocket[] = [];
        page.sockets = sockets;
        page.WebSocket = class extends page.WebSocket {
          constructor(...args: unknown[]) {
            super(...args);
            sockets.push(this as unknown as WebSocket);
          }
        };
      });
      await tab.goto(`${server.url}/playground`);
      await tab.getByLabel("Realtime profile").selectOption(id);
      await tab.getByRole("button", { name: "Talk" }).click();
      const alert = tab.getByRole("region", { name: "Realtime" }).getByRole("alert");
      await shows(alert, /\S/);
      // Once the refusal is told, no socket is open or opening (the server's idle timeout would close one only seconds later).
      const opened = await tab.evaluate(() => (globalThis as any).sockets.filter((s: WebSocket) => s.readyState < WebSocket.CLOSING).map((s: WebSocket) => s.url.replace(/\?.*/, "")) as string[]);
      expect(opened).toEqual([]);
      expect(app.connections.filter((c) => c.path === "/silent")).toEqual([]);
      await shows(alert, "the microphone could not be opened");
      expect(await tab.getByTestId("rt-state").textContent()).toBe("idle");
      expect(await tab.getByRole("button", { name: "Talk" }).count()).toBe(1);
    } finally {
      await refusing.close();
    }
  }, 30_000);

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

  test("the page threw no errors", () => {
    expect(pageErrors).toEqual([]);
  });
});
