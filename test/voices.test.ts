import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { join } from "node:path";
import { createKey } from "./helpers/accounts.ts";
import { createApp } from "../src/app.ts";
import { Catalogue } from "../src/catalogue/catalogue.ts";
import { servedCatalogue } from "../src/providers/served-catalogue.ts";
import { loadConfig } from "../src/config.ts";
import { ElevenLabsTts } from "../src/providers/elevenlabs/tts.ts";
import type { TtsProvider, TtsStream, Voice } from "../src/providers/types.ts";
import { VoiceCatalogue } from "../src/voices/voice-catalogue.ts";
import { entryOfVoice, type VoiceEntry } from "../src/voices/voice-entry.ts";
import { VoiceMetrics } from "../src/voices/voice-metrics.ts";
import { VoicePreviews } from "../src/voices/voice-previews.ts";
import { VoiceSightings } from "../src/voices/voice-sightings.ts";
import { FAKE_CARTESIA_KEY, FAKE_CARTESIA_VOICE, startFakeCartesia } from "./fakes/cartesia.ts";
import { FAKE_DEEPGRAM_KEY, startFakeDeepgram } from "./fakes/deepgram.ts";
import { FAKE_ELEVENLABS_KEY, FAKE_VOICE, GEORGE, startFakeElevenLabs } from "./fakes/elevenlabs.ts";
import { StalledListProvider, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { FAKE_OPENAI_KEY, startFakeOpenAi } from "./fakes/openai.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer } from "./helpers/ws-client.ts";
import { tempDir } from "./helpers/temp-dirs.ts";

// GET /v1/voices as a client uses it, on a server with the embedded engines (Flite, Pico from
// PICO_VOICES_DIR, eSpeak NG) and four cloud providers' fakes: what is listed and how, filters and
// their facet counts, the sort orders, pages with cursors, a catalogue that changes under a
// cursor, providers that fail, the embedded voices' previews, and a tenant's own voices.

/** A provider that serves Flite's model too (as a test's backup), with two of Flite's voices: their entries are merged. */
class FliteMirror implements TtsProvider {
  readonly id = "flite-mirror";
  open(): Promise<TtsStream> {
    return Promise.reject(new Error("not used"));
  }
  async voices(): Promise<Voice[]> {
    return [
      { id: "slt", name: "SLT", languages: ["en-US"], gender: "female" },
      { id: "rms", name: "RMS", languages: ["en-US"], gender: "male" },
    ];
  }
}

const MIRROR = {
  providers: [
    {
      id: "flite-mirror",
      name: "Flite mirror",
      kind: "cloud" as const,
      requiresVoice: true,
      defaults: { tts: { model: "flite" } },
      bindings: [
        { capability: "tts" as const, id: "flite", canonical: "cmu/flite", streaming: true, synchronous: true, formats: ["pcm" as const], price: { amount: "0.00001", per: "character" as const } },
      ],
    },
  ],
  models: [],
};

const elevenlabs = startFakeElevenLabs();
const cartesia = startFakeCartesia();
const deepgram = startFakeDeepgram();
const openai = startFakeOpenAi();
let server: TestServer;

const CLOUD_ENV = {
  ELEVENLABS_API_KEY: FAKE_ELEVENLABS_KEY,
  ELEVENLABS_BASE_URL: elevenlabs.url,
  CARTESIA_API_KEY: FAKE_CARTESIA_KEY,
  CARTESIA_BASE_URL: cartesia.url,
  DEEPGRAM_API_KEY: FAKE_DEEPGRAM_KEY,
  DEEPGRAM_BASE_URL: deepgram.http,
  OPENAI_API_KEY: FAKE_OPENAI_KEY,
  OPENAI_BASE_URL: `${openai.url}/v1`,
};

beforeAll(async () => {
  // Refreshed by the tests themselves (`refresh()`), as the interval would; one test below waits for the interval.
  server = await listed(startTestServer({ ...CLOUD_ENV, VOICE_CATALOGUE_REFRESH_MS: "3600000" }, { extra: { catalogue: MIRROR, providers: [new FliteMirror()] } }));
});

/**
 * The server once every provider's first list is in: until then `/v1/voices` answers with the
 * lists that came (the embedded engines' first), and a refresh under way is shared.
 */
async function listed(starting: Promise<TestServer>): Promise<TestServer> {
  const s = await starting;
  await s.ctx.voices.refresh();
  return s;
}

afterAll(async () => {
  await server.stop(0);
  for (const fake of [elevenlabs, cartesia, deepgram, openai]) fake.stop();
});

interface Page {
  voices: VoiceEntry[];
  total_count: number;
  has_more: boolean;
  next_cursor: string | null;
  catalogue_updated_at: string;
  facets?: { id: string; name: string; values: { id: string; name: string; count: number }[] }[];
}

async function voices(query = "", headers: Record<string, string> = {}, on = server.url): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${on}/v1/voices${query ? `?${query}` : ""}`, { headers });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

async function page(query = ""): Promise<Page> {
  const { status, body } = await voices(query);
  expect({ status, body: status === 200 ? "ok" : body }).toEqual({ status: 200, body: "ok" });
  return body as Page;
}

/** Every entry the query selects, page after page with its cursor. */
async function walk(query: string, limit = 7): Promise<VoiceEntry[]> {
  const all: VoiceEntry[] = [];
  let cursor: string | null = null;
  do {
    const p: Page = await page(`${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`);
    all.push(...p.voices);
    expect(p.voices.length).toBeLessThanOrEqual(limit);
    cursor = p.next_cursor;
    expect(p.has_more).toBe(cursor !== null);
  } while (cursor);
  return all;
}

const keyOf = (e: VoiceEntry) => `${e.model.id} ${e.voice.id}`;
const find = (list: VoiceEntry[], model: string, voice: string) => list.find((e) => e.model.id === model && e.voice.id === voice)!;
const labelOf = (e: VoiceEntry, facet: string) => e.voice.labels.find((l) => l.facet.id === facet)?.value.id;

describe("GET /v1/voices: what is listed", () => {
  test("every served provider's voices, in the interface's entry shape, with no key", async () => {
    const all = await walk("", 100);
    const providers = new Set(all.flatMap((e) => e.providers.map((p) => p.id)));
    expect([...providers].sort()).toEqual(["cartesia", "deepgram", "elevenlabs", "espeak-ng", "flite", "flite-mirror", "openai", "svox-pico"]);
    for (const e of all) {
      expect(Object.keys(e).sort()).toEqual(["model", "providers", "voice"]);
      expect(Object.keys(e.model).sort()).toEqual(["id", "name"]);
      expect(Object.keys(e.voice).sort()).toEqual(["category", "description", "first_seen_at", "id", "labels", "languages", "last_seen_at", "name", "preview_url", "scope", "source_urls"].sort());
      expect(e.voice.scope).toEqual({ type: "global" });
      expect(Date.parse(e.voice.first_seen_at)).toBeLessThanOrEqual(Date.parse(e.voice.last_seen_at));
      for (const l of e.voice.languages) expect(Object.keys(l).sort()).toEqual(["accent", "id", "locale", "name"]);
      for (const p of e.providers) {
        expect(Object.keys(p).sort()).toEqual(["default", "id", "metrics", "name", "provider_model_id"]);
        expect(Object.keys(p.metrics).sort()).toEqual(["characters_1y", "characters_7d", "clones", "likes", "popularity_score", "saves", "shares", "uses"]);
      }
      expect(e.providers.filter((p) => p.default).length).toBe(1);
    }
    // One entry per model and voice.
    expect(new Set(all.map(keyOf)).size).toBe(all.length);
  });

  test("the embedded engines' voices, with their languages, locales and genders", async () => {
    const all = await walk("provider=flite&provider=svox-pico&provider=espeak-ng", 100);
    const slt = find(all, "cmu/flite", "slt");
    expect(slt.voice).toMatchObject({
      name: "SLT (US English, female)",
      category: { id: "official", name: "Official" },
      languages: [{ id: "en", name: "English", locale: "en-US", accent: "American" }],
    });
    expect(labelOf(slt, "gender")).toBe("female");
    expect(labelOf(find(all, "cmu/flite", "awb"), "accent")).toBe("scottish");
    const pico = all.filter((e) => e.model.id === "svox/pico");
    expect(pico.map((e) => e.voice.id).sort()).toEqual(["de-DE", "en-GB", "en-US", "es-ES", "fr-FR", "it-IT"]);
    expect(find(all, "svox/pico", "de-DE").voice.languages).toEqual([{ id: "de", name: "German", locale: "de-DE", accent: null }]);
    expect(pico.every((e) => labelOf(e, "gender") === "female")).toBe(true);
    const espeak = all.filter((e) => e.model.id === "espeak/espeak-ng");
    expect(espeak.length).toBeGreaterThan(100);
    expect(find(all, "espeak/espeak-ng", "gmw/en-US").voice.languages[0]).toMatchObject({ id: "en", locale: "en-US" });
    expect(find(all, "espeak/espeak-ng", "gmw/de").voice.source_urls).toEqual(["https://github.com/espeak-ng/espeak-ng"]);
  });

  test("cloud voices as each provider describes them, one entry per model; the provider's preview URL is kept", async () => {
    const all = await walk("provider=elevenlabs&provider=cartesia&provider=deepgram&provider=openai", 100);
    const george = all.filter((e) => e.voice.id === FAKE_VOICE);
    const elevenModels = server.ctx.catalogue.bindings.filter((b) => b.provider.id === "elevenlabs" && b.capability === "tts").map((b) => b.canonical);
    expect(george.map((e) => e.model.id).sort()).toEqual([...elevenModels].sort());
    expect(george[0].voice).toMatchObject({
      name: "George",
      description: GEORGE.description,
      preview_url: GEORGE.preview_url,
      category: { id: "official" },
      languages: [{ id: "en", locale: "en-GB", accent: "British" }],
    });
    expect(george[0].voice.labels.map((l) => `${l.facet.id}:${l.value.id}`).sort()).toEqual(["accent:british", "age:middle_aged", "gender:male", "style:warm", "use_case:narration"]);
    const katie = all.find((e) => e.voice.id === FAKE_CARTESIA_VOICE)!;
    expect(katie.voice).toMatchObject({ name: "Katie", description: "A friendly voice", preview_url: null, languages: [{ id: "en", locale: null }] });
    const thalia = find(all, "deepgram/aura-2", "thalia-en");
    expect(thalia.voice).toMatchObject({ preview_url: "https://static.deepgram.com/examples/Aura-2-thalia.wav" });
    expect(labelOf(thalia, "gender")).toBe("female");
    expect(find(all, "openai/tts-1", "alloy").voice.preview_url).toBeNull();
  });

  test("a voice several providers offer for the same model is one entry listing each, the first the default", async () => {
    const slt = (await page("model=cmu/flite&q=slt")).voices.find((e) => e.voice.id === "slt")!;
    expect(slt.providers.map((p) => [p.id, p.default, p.provider_model_id])).toEqual([
      ["flite", true, "flite"],
      ["flite-mirror", false, "flite"],
    ]);
    // The first provider's description stands; the mirror alone does not make a second entry.
    expect(slt.voice.name).toBe("SLT (US English, female)");
    expect((await page("provider=flite-mirror")).voices.map((e) => e.voice.id).sort()).toEqual(["rms", "slt"]);
  });
});

describe("filters, facets and text", () => {
  test("facet counts are those of the filtered set, counted entry by entry", async () => {
    for (const query of ["", "language=en", "filter=gender:female", "q=english", "category=official&provider=flite&provider=elevenlabs"]) {
      const p = await page(`${query}&include_facets=true&limit=1`);
      const all = await walk(query, 100);
      expect(p.total_count).toBe(all.length);
      const counted = new Map<string, number>();
      const add = (facet: string, value: string) => counted.set(`${facet}:${value}`, (counted.get(`${facet}:${value}`) ?? 0) + 1);
      for (const e of all) {
        add("model", e.model.id);
        for (const id of new Set(e.providers.map((x) => x.id))) add("provider", id);
        for (const id of new Set(e.voice.languages.map((l) => l.id))) add("language", id);
        add("category", e.voice.category.id);
        for (const l of e.voice.labels) add(l.facet.id, l.value.id);
      }
      const facets = new Map(p.facets!.flatMap((f) => f.values.map((v) => [`${f.id}:${v.id}`, v.count] as const)));
      expect({ query, facets: Object.fromEntries(facets) }).toEqual({ query, facets: Object.fromEntries(counted) });
      expect(p.facets!.slice(0, 4).map((f) => f.id)).toEqual(["model", "provider", "language", "category"]);
    }
  });

  test("facets only when asked", async () => {
    expect((await page("limit=1")).facets).toBeUndefined();
    expect((await page("limit=1&include_facets=false")).facets).toBeUndefined();
  });

  test("each filter keeps what it names; values of one filter are any-of, different filters all-of", async () => {
    const pico = await walk("provider=svox-pico");
    expect(pico.length).toBe(6);
    const german = await walk("language=de");
    expect(german.every((e) => e.voice.languages.some((l) => l.id === "de"))).toBe(true);
    expect(german.map(keyOf)).toContain("svox/pico de-DE");
    expect(german.map(keyOf)).toContain("espeak/espeak-ng gmw/de");
    expect((await walk("language=en-GB")).every((e) => e.voice.languages.some((l) => l.locale === "en-GB"))).toBe(true);
    const either = (await walk("language=de&language=fr")).map(keyOf);
    expect(either.sort()).toEqual([...german, ...(await walk("language=fr"))].map(keyOf).sort());
    // `filter=language:…` is the same dimension as `language`.
    expect((await walk("language=de&filter=language:fr")).map(keyOf).sort()).toEqual(either);
    const femaleGerman = await walk("language=de&filter=gender:female");
    expect(femaleGerman.map(keyOf)).toEqual(["svox/pico de-DE"]);
    expect((await walk("filter=gender:Female")).length).toBe((await walk("filter=gender:female")).length);
    expect((await walk("model=flite")).every((e) => e.model.id === "cmu/flite")).toBe(true); // a model by any of its names
    expect((await walk("filter=accent:british")).map((e) => e.voice.id)).toContain(FAKE_VOICE);
    expect((await page("filter=accent:nowhere")).total_count).toBe(0);
  });

  test("categories: the account's own Cartesia voice is community; featured lists official first", async () => {
    cartesia.voices.push({ id: "own-voice", name: "Narrator Nine", language: "en", is_owner: true });
    try {
      await server.ctx.voices.refresh();
      const community = await walk("category=community");
      expect(community.map(keyOf)).toEqual(server.ctx.catalogue.bindings.filter((b) => b.provider.id === "cartesia" && b.capability === "tts").map((b) => `${b.canonical} own-voice`));
      const featured = await walk("provider=cartesia", 100);
      expect(featured.map((e) => e.voice.category.id)).toEqual([...featured.map((e) => e.voice.category.id)].sort((a, b) => (a === b ? 0 : a === "official" ? -1 : 1)));
      expect(featured.at(-1)!.voice.id).toBe("own-voice");
    } finally {
      cartesia.voices.splice(1);
      await server.ctx.voices.refresh();
    }
  });

  test("q matches names and descriptive metadata by word prefix; every word must match", async () => {
    expect((await walk("q=scot")).map(keyOf)).toEqual(expect.arrayContaining(["cmu/flite awb"]));
    expect((await walk("q=narration")).every((e) => e.voice.id === FAKE_VOICE)).toBe(true);
    expect((await walk("q=female german")).map(keyOf)).toEqual(["svox/pico de-DE"]);
    expect((await walk("q=Café")).length).toBe((await walk("q=cafe")).length);
    expect((await page("q=zzzzqqq")).total_count).toBe(0);
  });

  test("added_after keeps voices first seen after the time", async () => {
    expect((await page(`added_after=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).total_count).toBe(0);
    expect((await page("added_after=2000-01-01T00:00:00Z")).total_count).toBe((await page()).total_count);
  });
});

describe("sort orders", () => {
  test("featured is the default without q; relevance the default with it, and needs it", async () => {
    expect((await walk("", 100)).map(keyOf)).toEqual((await walk("sort=featured", 100)).map(keyOf));
    const { status, body } = await voices("sort=relevance");
    expect(status).toBe(400);
    expect(body).toMatchObject({ error: "invalid_request", param: "sort" });
    expect((await walk("q=slt", 100)).map(keyOf)).toEqual((await walk("q=slt&sort=relevance", 100)).map(keyOf));
  });

  test("relevance: a word of the name before one of other metadata, a whole word before a prefix", async () => {
    const hits = await walk("q=kal", 100);
    expect(
      hits
        .slice(0, 2)
        .map((e) => e.voice.id)
        .sort(),
    ).toEqual(["kal", "kal16"]);
    // Voices with "English" in their name before those that only speak it (George, Katie, Thalia, …).
    const english = await walk("q=english", 100);
    const inName = english.map((e) => /\benglish\b/i.test(e.voice.name));
    expect(inName.indexOf(false)).toBeGreaterThan(0);
    expect(inName.lastIndexOf(true)).toBeLessThan(inName.indexOf(false));
    expect(english.map((e) => e.voice.id)).toContain(FAKE_VOICE);
    const george = await walk("q=george", 100);
    expect(george[0].voice.id).toBe(FAKE_VOICE);
  });

  test("name: alphabetical, whatever the case", async () => {
    const names = (await walk("sort=name&provider=flite&provider=svox-pico&provider=elevenlabs", 100)).map((e) =>
      e.voice.name
        .toLowerCase()
        .replace(/[^\p{L}\p{N}]+/gu, " ")
        .trim(),
    );
    expect(names).toEqual([...names].sort());
  });

  test("newest: latest first seen first", async () => {
    const seen = (await walk("sort=newest", 100)).map((e) => Date.parse(e.voice.first_seen_at));
    expect(seen).toEqual([...seen].sort((a, b) => b - a));
  });
});

describe("pages and cursors", () => {
  test("pages of any size cover the selection once, in order, with a stable cursor", async () => {
    for (const query of ["", "q=english&include_facets=true", "sort=name&language=en", "sort=popular"]) {
      const whole = (await walk(query, 100)).map(keyOf);
      expect(whole.length).toBe((await page(query)).total_count);
      expect((await walk(query, 7)).map(keyOf)).toEqual(whole);
      expect((await walk(query, 1)).length).toBe(whole.length);
    }
  });

  test("the default page is 20, at most 100", async () => {
    expect((await page()).voices.length).toBe(20);
    expect((await page("limit=100")).voices.length).toBe(100);
  });

  test("a cursor is for its own query: another query's, or no cursor of ours, is 400 naming cursor", async () => {
    const { next_cursor } = await page("language=en&limit=2");
    expect(next_cursor).toBeString();
    for (const query of [`language=de&cursor=${next_cursor}`, `sort=name&language=en&cursor=${next_cursor}`, "cursor=nonsense", `cursor=${"x".repeat(513)}`]) {
      const { status, body } = await voices(query);
      expect({ query, status, body }).toMatchObject({ query, status: 400, body: { error: "invalid_request", param: "cursor" } });
    }
    // The page size may change between pages.
    expect((await page(`language=en&limit=3&cursor=${next_cursor}`)).voices.length).toBe(3);
  });

  test("a refresh that finds the same voices keeps cursors; a changed catalogue answers catalogue_changed (409)", async () => {
    const first = await page("limit=5");
    await server.ctx.voices.refresh();
    const again = await page(`limit=5&cursor=${first.next_cursor}`);
    expect(again.catalogue_updated_at).toBe(first.catalogue_updated_at);

    elevenlabs.voices.push({ voice_id: "NEWvoice000000000001", name: "Aria", category: "premade", labels: { gender: "female", accent: "american" } });
    try {
      await server.ctx.voices.refresh();
      const { status, body } = await voices(`limit=5&cursor=${first.next_cursor}`);
      expect(status).toBe(409);
      expect(body).toMatchObject({ error: "catalogue_changed" });
      const fresh = await page("sort=newest&limit=3");
      expect(Date.parse(fresh.catalogue_updated_at)).toBeGreaterThan(Date.parse(first.catalogue_updated_at));
      expect(fresh.voices[0].voice.id).toBe("NEWvoice000000000001");
      const added = await walk(`added_after=${encodeURIComponent(first.catalogue_updated_at)}`);
      expect(new Set(added.map((e) => e.voice.id))).toEqual(new Set(["NEWvoice000000000001"]));
    } finally {
      elevenlabs.voices.splice(1);
      await server.ctx.voices.refresh();
    }
  });
});

describe("bad parameters: 400 invalid_request naming the parameter", () => {
  const cases: [string, string][] = [
    ["limit=0", "limit"],
    ["limit=101", "limit"],
    ["limit=ten", "limit"],
    ["include_facets=yes", "include_facets"],
    ["added_after=yesterday", "added_after"],
    ["added_after=2026-11-01", "added_after"],
    ["sort=loudest", "sort"],
    ["model=no-such-model", "model"],
    ["model=pocketsphinx", "model"],
    ["provider=nobody", "provider"],
    ["language=english!", "language"],
    ["filter=female", "filter"],
    ["filter=model:nope", "filter"],
    ["category=x", "category"],
    ["category=official&category=premade", "category"],
    ["filter=category:x", "filter"],
    ["q=a&q=b", "q"],
    ["colour=blue", "colour"],
    [`q=${"a".repeat(201)}`, "q"],
  ];
  for (const [query, param] of cases) {
    test(query.slice(0, 40), async () => {
      const { status, body, headers } = await voices(query);
      expect(status).toBe(400);
      expect(body).toMatchObject({ error: "invalid_request", param });
      expect(headers.get("x-should-retry")).toBe("false");
    });
  }
});

describe("providers that fail", () => {
  test("a provider whose list cannot be had keeps its last list (and its last sighting)", async () => {
    const before = await walk("provider=elevenlabs&provider=flite", 100);
    elevenlabs.fault("500");
    await Bun.sleep(5);
    await server.ctx.voices.refresh();
    const after = await walk("provider=elevenlabs&provider=flite", 100);
    expect(after.map(keyOf)).toEqual(before.map(keyOf));
    const george = (list: VoiceEntry[]) => list.find((e) => e.voice.id === FAKE_VOICE)!.voice.last_seen_at;
    expect(george(after)).toBe(george(before));
    const slt = (list: VoiceEntry[]) => find(list, "cmu/flite", "slt").voice.last_seen_at;
    expect(Date.parse(slt(after))).toBeGreaterThan(Date.parse(slt(before)));
  });

  test("with no provider's list at all: 503 voice_catalogue_unavailable with Retry-After, until one answers", async () => {
    const fake = startFakeElevenLabs();
    try {
      const config = loadConfig({ ELEVENLABS_API_KEY: FAKE_ELEVENLABS_KEY, ELEVENLABS_BASE_URL: fake.url });
      const served = servedCatalogue(config);
      const catalogue = new Catalogue({ providers: served.providers.filter((p) => p.id === "elevenlabs"), models: served.models });
      const adapter = new ElevenLabsTts({ apiKey: FAKE_ELEVENLABS_KEY, baseUrl: fake.url, connectTimeoutMs: 1000, idleTimeoutMs: 1000 });
      const providers = new Map([["elevenlabs", adapter as TtsProvider]]);
      const { ctx } = server;
      const catalogueOfVoices = new VoiceCatalogue(
        {
          catalogue,
          providers,
          log: ctx.log,
          metrics: new VoiceMetrics(ctx.database, ctx.log, 3_600_000),
          sightings: new VoiceSightings(ctx.database, ctx.log),
          previews: new VoicePreviews(catalogue, providers, ctx.log, 1000),
        },
        { refreshMs: 3_600_000, retryMs: 5_000, listTimeoutMs: 1000 },
      );
      fake.fault("500");
      catalogueOfVoices.start();
      const app = createApp({ ...ctx, catalogue, providers, voices: catalogueOfVoices });
      const res = await app.handle(new Request("http://localhost/v1/voices"));
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ error: "voice_catalogue_unavailable" });
      expect(res.headers.get("retry-after")).toBe("5");
      await catalogueOfVoices.refresh();
      const ok = await app.handle(new Request("http://localhost/v1/voices"));
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as Page).voices.map((e) => e.voice.id)).toContain(FAKE_VOICE);
      await catalogueOfVoices.stop();
    } finally {
      fake.stop();
    }
  });

  test("a provider that stalls holds up neither the first answer nor the server's stop", async () => {
    const stalled = new StalledListProvider("stalled");
    // The listing's own bound is an hour: an answer and a stop that come at all came without waiting for the stalled list.
    const local = await startTestServer({ ESPEAK_ENABLED: "false", VOICE_LIST_TIMEOUT_MS: "3600000" }, { extra: { catalogue: testCatalogue(["stalled"]), providers: [stalled] } });
    try {
      const { status, body } = await voices("provider=flite", {}, local.url);
      expect(status).toBe(200);
      expect(body.total_count).toBe(5);
      expect(stalled.listsAsked).toBe(1); // asked before the answer, and never answered
    } finally {
      await local.stop(0);
    }
  });

  test("the catalogue is refreshed in the background, every VOICE_CATALOGUE_REFRESH_MS, with no request waiting on a provider", async () => {
    const fake = startFakeElevenLabs();
    const quick = await listed(startTestServer({ ELEVENLABS_API_KEY: FAKE_ELEVENLABS_KEY, ELEVENLABS_BASE_URL: fake.url, ESPEAK_ENABLED: "false", VOICE_CATALOGUE_REFRESH_MS: "200" }));
    try {
      expect((await voices("provider=elevenlabs", {}, quick.url)).body.voices.map((e: VoiceEntry) => e.voice.id)).not.toContain("LATEvoice");
      fake.voices.push({ voice_id: "LATEvoice", name: "Late", category: "premade" });
      let found = false;
      for (let i = 0; i < 50 && !found; i++) {
        await Bun.sleep(100);
        found = (await voices("provider=elevenlabs&q=late", {}, quick.url)).body.voices.some((e: VoiceEntry) => e.voice.id === "LATEvoice");
      }
      expect(found).toBe(true);
    } finally {
      await quick.stop(0);
      fake.stop();
    }
  });
});

describe("previews of the embedded voices", () => {
  async function probe(bytes: Uint8Array): Promise<{ streams: { codec_name: string; sample_rate: string; channels: number }[]; format: { duration: string } }> {
    const file = join(tempDir("voxroute-preview-"), "preview.mp3");
    await Bun.write(file, bytes);
    const proc = Bun.spawn(["ffprobe", "-v", "error", "-show_streams", "-show_format", "-of", "json", file], { stdout: "pipe", stderr: "pipe" });
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    expect(code).toBe(0);
    return JSON.parse(out);
  }

  test("served by the router as MP3 that decodes to a few seconds of speech, made once", async () => {
    const all = await walk("provider=flite&provider=svox-pico", 100);
    for (const [model, voice, provider] of [
      ["cmu/flite", "slt", "flite"],
      ["svox/pico", "de-DE", "svox-pico"],
    ]) {
      const url = find(all, model, voice).voice.preview_url!;
      expect(url.startsWith(`${server.url}/v1/voices/preview?`)).toBe(true);
      const syntheses = spyOn(server.ctx.providers.get(provider!)!, "open");
      try {
        const res = await fetch(url);
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toBe("audio/mpeg");
        const bytes = new Uint8Array(await res.arrayBuffer());
        const info = await probe(bytes);
        expect(info.streams).toHaveLength(1);
        expect(info.streams[0]).toMatchObject({ codec_name: "mp3", channels: 1 });
        expect(Number(info.format.duration)).toBeGreaterThan(1.5);
        expect(Number(info.format.duration)).toBeLessThan(15);
        const again = new Uint8Array(await (await fetch(url)).arrayBuffer());
        expect(Buffer.from(again).equals(Buffer.from(bytes))).toBe(true);
        expect(syntheses).toHaveBeenCalledTimes(1); // kept, not synthesized again
      } finally {
        syntheses.mockRestore();
      }
    }
  });

  test("no preview of a cloud voice or an unknown one: 404 not_found", async () => {
    for (const q of [`model=openai/tts-1&voice=alloy`, "model=cmu/flite&voice=nobody", "voice=slt", ""]) {
      const res = await fetch(`${server.url}/v1/voices/preview?${q}`);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: "not_found" });
    }
  });

  test("PUBLIC_URL makes the preview URLs absolute under it", async () => {
    const behind = await listed(startTestServer({ PUBLIC_URL: "https://voices.example.com/", ESPEAK_ENABLED: "false" }));
    try {
      const slt = (await voices("q=slt&model=cmu/flite", {}, behind.url)).body.voices[0] as VoiceEntry;
      expect(slt.voice.preview_url).toBe("https://voices.example.com/v1/voices/preview?model=cmu%2Fflite&voice=slt");
    } finally {
      await behind.stop(0);
    }
  });
});

describe("a tenant's own voices (the cloned voices' hook)", () => {
  test("with its key, its own entries are searched with the catalogue: same filters, first in featured, never without the key", async () => {
    const flite = server.ctx.catalogue.lookup("cmu/flite", "tts")[0];
    const { key, tenantId } = await createKey(server.ctx.database, `own-${crypto.randomUUID()}`);
    const mine = entryOfVoice({ id: "clone:me@1", name: "My cloned voice", languages: ["en-US"], gender: "female" }, flite, { scope: "organization", category: "cloned" });
    server.ctx.voices.setOwnVoices(async (tenant) => (tenant === tenantId ? [mine] : []));
    try {
      const withKey = await voices("limit=3&include_facets=true", bearer(key));
      expect(withKey.status).toBe(200);
      expect(withKey.body.voices[0].voice).toMatchObject({ id: "clone:me@1", scope: { type: "organization" }, category: { id: "cloned" } });
      expect(withKey.body.total_count).toBe((await page()).total_count + 1);
      const categories = withKey.body.facets.find((f: { id: string }) => f.id === "category").values;
      expect(categories).toContainEqual({ id: "cloned", name: "Cloned", count: 1 });
      expect((await voices("filter=gender:male&model=cmu/flite", bearer(key))).body.voices.map((e: VoiceEntry) => e.voice.id)).not.toContain("clone:me@1");
      expect((await voices("q=cloned", bearer(key))).body.voices[0].voice.id).toBe("clone:me@1");
      // Pages over both, with a cursor bound to them.
      const pages: string[] = [];
      let cursor: string | null = null;
      do {
        const res: { body: Page } = await voices(`model=cmu/flite&limit=2${cursor ? `&cursor=${cursor}` : ""}`, bearer(key));
        pages.push(...res.body.voices.map(keyOf));
        cursor = res.body.next_cursor;
      } while (cursor);
      expect(pages[0]).toBe("cmu/flite clone:me@1");
      expect(new Set(pages).size).toBe(pages.length);
      expect(pages.length).toBe((await page("model=cmu/flite")).total_count + 1);
      // Without the key, or for another tenant: the catalogue alone.
      expect((await page("q=cloned")).voices.map((e) => e.voice.id)).not.toContain("clone:me@1");
      expect((await voices("limit=1", bearer(server.key))).body.voices[0].voice.id).not.toBe("clone:me@1");
    } finally {
      server.ctx.voices.setOwnVoices(async () => []);
    }
  });

  test("a key that is sent must be valid", async () => {
    const { status, body } = await voices("", { Authorization: "Bearer vxr_nope" });
    expect(status).toBe(401);
    expect(body).toMatchObject({ error: "invalid_api_key" });
  });

  test("the catalogue looks entries up by voice id, one per model", () => {
    const george = server.ctx.voices.entriesOfVoice(FAKE_VOICE);
    expect(george.length).toBe(server.ctx.catalogue.bindings.filter((b) => b.provider.id === "elevenlabs" && b.capability === "tts").length);
    expect(server.ctx.voices.entry("cmu/flite", "slt")?.voice.name).toBe("SLT (US English, female)");
    expect(server.ctx.voices.entriesOfVoice("nobody")).toEqual([]);
  });
});
