import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ElevenLabsClient } from "@elevenlabs/elevenlabs-js";
import { eq } from "drizzle-orm";
import { startFakeCartesia } from "./fakes/cartesia.ts";
import { startFakeElevenLabs } from "./fakes/elevenlabs.ts";
import { cartesiaAt, elevenLabsAt } from "./fakes/server-env.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { startTestServer, stopServerAndFakes, type TestServer } from "./helpers/server.ts";
import { speak, wavFile } from "./helpers/speech.ts";

// /v1/custom-voices and the /el cloning routes, through the real ElevenLabs and Cartesia adapters
// against their fakes on loopback: cloning real speech, the once-only fee, the status a client
// polls, deleting, a voice only its owner can speak with, and the providers' failures.

const elevenlabs = startFakeElevenLabs();
const cartesia = startFakeCartesia();
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ ...elevenLabsAt(elevenlabs), ...cartesiaAt(cartesia), CUSTOM_VOICE_POLL_MS: "50" });
});
afterAll(() => stopServerAndFakes(server, elevenlabs, cartesia));

const FEE = 300_000;
const recording = (text = "My voice sounds like this when I read a sentence aloud.") => new File([wavFile(speak(text))], "take.wav", { type: "audio/wav" });

function clone(key: string, fields: Record<string, string>, files: File[] = [recording()]) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  for (const f of files) form.append("files", f);
  return fetch(`${server.url}/v1/custom-voices`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
}

const get = (key: string, id: string) => fetch(`${server.url}/v1/custom-voices/${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${key}` } });
const remove = (key: string, id: string) => fetch(`${server.url}/v1/custom-voices/${encodeURIComponent(id)}`, { method: "DELETE", headers: { authorization: `Bearer ${key}` } });

/** Speech in a cloned voice through /oai (any surface would do): the status, and the audio bytes when it worked. */
async function speakWith(key: string, voice: string, model = "elevenlabs/eleven_flash_v2_5") {
  const res = await fetch(`${server.url}/oai/audio/speech`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model, voice, input: "Hello there.", response_format: "pcm" }),
  });
  return { status: res.status, bytes: res.ok ? (await res.arrayBuffer()).byteLength : 0, body: res.ok ? undefined : ((await res.json()) as Record<string, any>) };
}

async function paidCredits(key: string): Promise<number> {
  const res = await fetch(`${server.url}/account/balance`, { headers: { authorization: `Bearer ${key}` } });
  return ((await res.json()) as { paid_credits: number }).paid_credits;
}

async function until(check: () => Promise<boolean>, ms = 10_000) {
  for (const end = Date.now() + ms; !(await check()) && Date.now() < end; ) await Bun.sleep(20);
  expect(await check()).toBe(true);
}

describe("/v1/custom-voices", () => {
  test("a clone of real speech with ElevenLabs: 201 active, the fee charged once, its owner speaks with it, nobody else sees it; deleted, it is gone", async () => {
    const owner = await fundedAccount(server);
    const other = await fundedAccount(server);
    const before = await paidCredits(owner.key);
    const res = await clone(owner.key, { name: "Ada", provider: "elevenlabs", model: "eleven_flash_v2_5", language: "en-GB", description: "Warm" });
    expect(res.status).toBe(201);
    const made = (await res.json()) as Record<string, any>;
    const id = made.id as string;
    expect(made.voices).toHaveLength(1);
    expect(made.voices[0]).toMatchObject({
      model: { id: "elevenlabs/eleven_flash_v2_5" },
      voice: { id, name: "Ada", description: "Warm", category: { id: "cloned" }, scope: { type: "organization" }, status: "active", fee_credits: FEE, languages: [{ id: "en", locale: "en-GB" }] },
      providers: [{ id: "elevenlabs", provider_model_id: "eleven_flash_v2_5", status: "active", failure_reason: null }],
    });
    expect(elevenlabs.clonedVoices.get(id)).toMatchObject({ name: "Ada" });
    expect(await paidCredits(owner.key)).toBe(before - FEE);

    const spoken = await speakWith(owner.key, id);
    expect(spoken).toMatchObject({ status: 200 });
    expect(spoken.bytes).toBeGreaterThan(0);
    // Another tenant: no such voice, wherever it asks.
    expect((await get(other.key, id)).status).toBe(404);
    expect((await remove(other.key, id)).status).toBe(404);
    const refused = await speakWith(other.key, id);
    expect(refused).toMatchObject({ status: 400, body: { error: { param: "voice" } } });
    // A model of another provider cannot have it.
    expect((await speakWith(owner.key, id, "cartesia/sonic-3")).status).toBe(400);

    const list = (await (await fetch(`${server.url}/v1/custom-voices`, { headers: { authorization: `Bearer ${owner.key}` } })).json()) as { voices: { voice: { id: string } }[] };
    expect(list.voices.map((v) => v.voice.id)).toEqual([id]);

    expect((await remove(owner.key, id)).status).toBe(204);
    expect((await get(owner.key, id)).status).toBe(404);
    expect(elevenlabs.clonedVoices.has(id)).toBe(false);
    // Charged once, whatever happened after.
    const { db, schema } = server.ctx.database;
    const charges = await db
      .select()
      .from(schema.creditTransactions)
      .where(eq(schema.creditTransactions.externalId, `voice_clone:${id}`));
    expect(charges.map((c) => [c.type, c.credits])).toEqual([["charge", -FEE]]);
  });

  test("a clone the provider is still processing: 201 processing, unusable until it is active, then charged once", async () => {
    const { key } = await fundedAccount(server);
    const before = await paidCredits(key);
    elevenlabs.fault("verifying");
    const res = await clone(key, { name: "Slowpoke", provider: "elevenlabs" });
    expect(res.status).toBe(201);
    const made = (await res.json()) as Record<string, any>;
    expect(made.voices[0].voice.status).toBe("processing");
    // Without a model, the voice is offered for every TTS model of its provider.
    expect(made.voices.map((v: any) => v.providers[0].provider_model_id)).toContain("eleven_multilingual_v2");
    expect(await paidCredits(key)).toBe(before);
    const early = await speakWith(key, made.id);
    expect(early.status).toBe(400);
    expect(early.body!.error.message).toContain("processing");

    await until(async () => ((await (await get(key, made.id)).json()) as any).voices[0].voice.status === "active");
    expect(await paidCredits(key)).toBe(before - FEE);
    expect((await speakWith(key, made.id)).status).toBe(200);
  });

  test("Cartesia clones from one clip; two are custom_voices_failed, with nothing charged", async () => {
    const { key } = await fundedAccount(server);
    const before = await paidCredits(key);
    const two = await clone(key, { name: "Duo", provider: "cartesia", language: "en" }, [recording(), recording("And a second take of the same voice.")]);
    expect(two.status).toBe(422);
    expect(((await two.json()) as { error: string }).error).toBe("custom_voices_failed");
    const one = await clone(key, { name: "Solo", provider: "cartesia", language: "en" });
    expect(one.status).toBe(201);
    const made = (await one.json()) as Record<string, any>;
    expect(made.voices[0]).toMatchObject({ voice: { status: "active" }, providers: [{ id: "cartesia" }] });
    expect(await paidCredits(key)).toBe(before - FEE);
    expect((await speakWith(key, made.id, "cartesia/sonic-3")).status).toBe(200);
  });

  test("the provider's refusals and failures: recordings that are not audio 422, its 500 502; neither stores nor charges anything", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const before = await paidCredits(key);
    const notAudio = await clone(key, { name: "Bad", provider: "elevenlabs" }, [new File([new TextEncoder().encode("not audio at all")], "notes.wav", { type: "audio/wav" })]);
    expect(notAudio.status).toBe(422);
    const refusal = (await notAudio.json()) as { error: string; message: string };
    expect(refusal.error).toBe("custom_voices_failed");
    expect(refusal.message).toContain("notes.wav");
    elevenlabs.fault("500");
    const failed = await clone(key, { name: "Unlucky", provider: "elevenlabs" });
    expect([failed.status, ((await failed.json()) as { error: string }).error]).toEqual([502, "upstream_error"]);
    expect(await paidCredits(key)).toBe(before);
    const { db, schema } = server.ctx.database;
    expect(await db.select().from(schema.customVoices).where(eq(schema.customVoices.tenantId, tenantId))).toEqual([]);
  });

  test("what is refused before the provider is asked: no balance for the fee 402, a provider that cannot clone, a missing name or recording 400", async () => {
    const poor = await fundedAccount(server, FEE - 1);
    const clonesBefore = elevenlabs.clonedVoices.size;
    const noMoney = await clone(poor.key, { name: "Ada", provider: "elevenlabs" });
    expect([noMoney.status, ((await noMoney.json()) as { error: string }).error]).toEqual([402, "insufficient_balance"]);
    expect(elevenlabs.clonedVoices.size).toBe(clonesBefore);

    const { key } = await fundedAccount(server);
    const cases: [Record<string, string>, File[], string][] = [
      [{ name: "Ada", provider: "flite" }, [recording()], "provider"],
      [{ name: "Ada", provider: "elevenlabs", model: "sonic-3" }, [recording()], "model"],
      [{ provider: "elevenlabs" }, [recording()], "name"],
      [{ name: "Ada", provider: "elevenlabs" }, [], "files"],
      [{ name: "Ada", provider: "elevenlabs" }, [new File([], "empty.wav")], "files"],
    ];
    for (const [fields, files, param] of cases) {
      const res = await clone(key, fields, files);
      expect([res.status, ((await res.json()) as { param?: string }).param]).toEqual([400, param]);
    }
  });

  test("a name, description or language past its limit is 400 naming it, before the provider is asked; a name of 100 characters is taken", async () => {
    const { key } = await fundedAccount(server);
    const clonesBefore = elevenlabs.clonedVoices.size;
    const cases: [Record<string, string>, string][] = [
      [{ name: "N".repeat(101) }, "name"],
      [{ name: "N".repeat(1_000_000) }, "name"],
      [{ name: "Ada", description: "d".repeat(1001) }, "description"],
      [{ name: "Ada", language: `en-${"x".repeat(40)}` }, "language"],
    ];
    for (const [fields, param] of cases) {
      const res = await clone(key, { provider: "elevenlabs", ...fields });
      expect([res.status, (await res.json()) as { error: string; param?: string }]).toEqual([400, expect.objectContaining({ error: "invalid_request", param })]);
    }
    expect(elevenlabs.clonedVoices.size).toBe(clonesBefore);
    const longest = await clone(key, { name: "N".repeat(100), provider: "elevenlabs", description: "d".repeat(1000) });
    expect(longest.status).toBe(201);
    expect(((await longest.json()) as any).voices[0].voice.name).toBe("N".repeat(100));
  });

  test("ids come verbatim from the path (colons, at-signs, escapes); too long is 400; a delete under way is 409, a provider failing it 502 with the voice kept", async () => {
    const { key } = await fundedAccount(server);
    expect((await fetch(`${server.url}/v1/custom-voices/voice:with@odd`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(404);
    expect((await get(key, "x".repeat(121))).status).toBe(400);
    expect((await fetch(`${server.url}/v1/custom-voices/abc`)).status).toBe(401);

    const made = (await (await clone(key, { name: "Keeper", provider: "elevenlabs" })).json()) as { id: string };
    elevenlabs.fault("500");
    const failed = await remove(key, made.id);
    expect([failed.status, ((await failed.json()) as { error: string }).error]).toEqual([502, "upstream_error"]);
    expect(((await (await get(key, made.id)).json()) as any).voices[0].voice.status).toBe("active");

    const { db, schema } = server.ctx.database;
    await server.ctx.database.transaction((tx) => tx.update(schema.customVoices).set({ status: "deleting" }).where(eq(schema.customVoices.id, made.id)));
    const again = await remove(key, made.id);
    expect([again.status, ((await again.json()) as { error: string }).error]).toEqual([409, "stale_transition"]);
    expect((await db.select().from(schema.customVoices).where(eq(schema.customVoices.id, made.id))).length).toBe(1);
  });
});

describe("cloned voices in GET /v1/voices", () => {
  test("the owner's key finds its active cloned voice (organization, cloned); nobody else's catalogue lists it, even once the provider's list has it", async () => {
    const owner = await fundedAccount(server);
    const other = await fundedAccount(server);
    const made = (await (await clone(owner.key, { name: "Zephyrine", provider: "elevenlabs", model: "eleven_flash_v2_5" })).json()) as { id: string };
    await server.ctx.voices.refresh(); // the fake's list now holds the clone
    const search = async (key?: string) => {
      const res = await fetch(`${server.url}/v1/voices?q=zephyrine`, key ? { headers: { authorization: `Bearer ${key}` } } : {});
      expect(res.status).toBe(200);
      return ((await res.json()) as { voices: Record<string, any>[] }).voices;
    };
    const own = await search(owner.key);
    expect(own).toHaveLength(1);
    expect(own[0]).toMatchObject({ model: { id: "elevenlabs/eleven_flash_v2_5" }, voice: { id: made.id, scope: { type: "organization" }, category: { id: "cloned" } } });
    expect(await search(other.key)).toEqual([]);
    expect(await search()).toEqual([]);
  });
});

describe("/el voices with the ElevenLabs SDK", () => {
  test("voices.search pages through the catalogue (each voice once) with the caller's cloned voice; voices.get reads one; getAll lists them all", async () => {
    const { key } = await fundedAccount(server);
    const client = new ElevenLabsClient({ apiKey: key, baseUrl: `${server.url}/el` });
    const made = (await (await clone(key, { name: "Quillon", provider: "elevenlabs" })).json()) as { id: string };
    await server.ctx.voices.refresh(); // every provider's list in (the embedded engines' come last)
    const seen: string[] = [];
    let token: string | undefined;
    let total = 0;
    for (let pages = 0; pages < 100; pages++) {
      const page = await client.voices.search({ pageSize: 7, ...(token ? { nextPageToken: token } : {}) });
      total = page.totalCount;
      seen.push(...page.voices.map((v) => v.voiceId));
      if (!page.hasMore) break;
      token = page.nextPageToken!;
    }
    expect(seen.length).toBe(total);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toContain(made.id);
    expect(seen).toContain("slt");
    expect(seen).toContain("JBFqnCBsd6RMkjVDRZzb");

    const found = await client.voices.search({ search: "quillon" });
    expect(found.voices.map((v) => [v.voiceId, v.category, v.isOwner])).toEqual([[made.id, "cloned", true]]);
    const george = await client.voices.get("JBFqnCBsd6RMkjVDRZzb");
    expect(george).toMatchObject({ voiceId: "JBFqnCBsd6RMkjVDRZzb", name: "George", category: "premade", labels: { provider: "elevenlabs" } });
    expect(george.highQualityBaseModelIds).toContain("elevenlabs/eleven_flash_v2_5");
    expect((await client.voices.get(made.id)).name).toBe("Quillon");
    const everyone = await client.voices.getAll();
    expect(everyone.voices.map((v) => v.voiceId).sort()).toEqual([...seen].sort());
    // Another tenant: neither listed nor readable.
    const other = new ElevenLabsClient({ apiKey: (await fundedAccount(server)).key, baseUrl: `${server.url}/el` });
    expect((await other.voices.search({ search: "quillon" })).voices).toEqual([]);
    expect(
      await other.voices.get(made.id).then(
        () => 200,
        (e: unknown) => (e as { statusCode: number }).statusCode,
      ),
    ).toBe(404);
  });
});

describe("/el voice cloning with the ElevenLabs SDK", () => {
  test("voices.ivc.create clones with ElevenLabs; voices.delete deletes it", async () => {
    const { key } = await fundedAccount(server);
    const client = new ElevenLabsClient({ apiKey: key, baseUrl: `${server.url}/el` });
    const made = await client.voices.ivc.create({ name: "Sdk voice", files: [recording()], labels: { language: "en" } as never });
    expect(made.requiresVerification).toBe(false);
    expect(elevenlabs.clonedVoices.has(made.voiceId)).toBe(true);
    expect(((await (await get(key, made.voiceId)).json()) as any).voices[0].voice.languages[0].id).toBe("en");
    expect(await client.voices.delete(made.voiceId)).toMatchObject({ status: "ok" });
    expect(elevenlabs.clonedVoices.has(made.voiceId)).toBe(false);
  });

  test("voices.ivc.create with a name, description or labels past their limits: BadRequestError naming the field, nothing cloned", async () => {
    const { key } = await fundedAccount(server);
    const client = new ElevenLabsClient({ apiKey: key, baseUrl: `${server.url}/el` });
    const clonesBefore = elevenlabs.clonedVoices.size;
    const cases: [Parameters<typeof client.voices.ivc.create>[0], string][] = [
      [{ name: "N".repeat(101), files: [recording()] }, "name"],
      [{ name: "Ada", description: "d".repeat(1001), files: [recording()] }, "description"],
      [{ name: "Ada", labels: { note: "l".repeat(1000) } as never, files: [recording()] }, "labels"],
    ];
    for (const [request, param] of cases) {
      const refused = await client.voices.ivc.create(request).then(
        () => undefined,
        (e: unknown) => {
          const { statusCode, body } = e as { statusCode: number; body: { detail: Record<string, unknown> } };
          return { status: statusCode, detail: body.detail };
        },
      );
      expect(refused).toEqual({ status: 400, detail: expect.objectContaining({ status: "invalid_request", param }) });
    }
    expect(elevenlabs.clonedVoices.size).toBe(clonesBefore);
  });
});
