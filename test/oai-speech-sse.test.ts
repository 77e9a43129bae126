import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

// `POST /oai/audio/speech` with `stream_format: "sse"`, through the official OpenAI SDK: OpenAI's
// speech.audio.delta / speech.audio.done events, the audio intact, billed as the raw request.

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop(0));

interface SpeechEvent {
  type: string;
  audio?: string;
  usage?: { input_tokens: number; output_tokens: number; total_tokens: number };
  error?: { code: string };
}

/** The SDK hands back the raw response for speech; its body is read as SSE events as they arrive. */
async function events(res: Response): Promise<{ events: SpeechEvent[]; reads: number }> {
  const out: SpeechEvent[] = [];
  let text = "";
  let reads = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    reads++;
    text += new TextDecoder().decode(chunk);
  }
  for (const block of text.split("\n\n").filter(Boolean)) {
    const data = block.split("\n").find((l) => l.startsWith("data: "));
    out.push(JSON.parse(data!.slice(6)));
  }
  return { events: out, reads };
}

const audioOf = (evs: SpeechEvent[]) => Buffer.concat(evs.filter((e) => e.type === "speech.audio.delta").map((e) => Buffer.from(e.audio!, "base64")));
const input = "Hello from the router. This is a second sentence.";

describe("/oai/audio/speech with stream_format sse", () => {
  test("pcm: deltas of base64 PCM then done with usage; billed as the same request without sse", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const sdk = new OpenAI({ apiKey: key, baseURL: `${server.url}/oai`, maxRetries: 0 });
    const res = await sdk.audio.speech.create({ model: "flite", voice: "slt", input, response_format: "pcm", stream_format: "sse" });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const { events: evs } = await events(res as unknown as Response);
    expect(evs.filter((e) => e.type === "speech.audio.delta").length).toBeGreaterThan(1); // streamed, not one buffered piece
    expect(evs.at(-1)).toEqual({ type: "speech.audio.done", usage: { input_tokens: input.length, output_tokens: 0, total_tokens: input.length } });
    const pcm = audioOf(evs);
    expect(pcm.byteLength % 2).toBe(0);
    expect(pcm.byteLength).toBeGreaterThan(24000 * 2 * 1.5); // more than 1.5 s of 24 kHz 16-bit speech
    const sse = await lastActivity(server, tenantId);

    // A second account, so that no sub-credit carry from the first request shifts the rounding.
    const other = await fundedAccount(server);
    const raw = await new OpenAI({ apiKey: other.key, baseURL: `${server.url}/oai`, maxRetries: 0 }).audio.speech.create({ model: "flite", voice: "slt", input, response_format: "pcm" });
    expect((await raw.arrayBuffer()).byteLength).toBe(pcm.byteLength); // the same audio, only framed
    const plain = await lastActivity(server, other.tenantId);
    expect(sse).toMatchObject({ surface: "oai", status: "completed", usageUnit: "characters", usageAmount: input.length });
    expect(sse.usageAmount).toBe(plain.usageAmount);
    expect(sse.credits).toBe(plain.credits);
  });

  test("mp3: the joined deltas are an MP3 that ffprobe reads, of the speech's length", async () => {
    const sdk = new OpenAI({ apiKey: server.key, baseURL: `${server.url}/oai`, maxRetries: 0 });
    const res = await sdk.audio.speech.create({ model: "flite", voice: "slt", input, response_format: "mp3", stream_format: "sse" });
    const mp3 = audioOf((await events(res as unknown as Response)).events);
    const path = `/tmp/oai-sse-${crypto.randomUUID()}.mp3`;
    await Bun.write(path, mp3);
    const probe = Bun.spawnSync(["ffprobe", "-v", "error", "-show_entries", "format=duration:stream=codec_name", "-of", "json", path]);
    await Bun.file(path).delete();
    const info = JSON.parse(probe.stdout.toString());
    expect(info.streams[0].codec_name).toBe("mp3");
    expect(Number(info.format.duration)).toBeGreaterThan(1.5);
    expect(Number(info.format.duration)).toBeLessThan(10);
  });

  test("an unknown stream_format is 400 naming it", async () => {
    const res = await fetch(`${server.url}/oai/audio/speech`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "flite", voice: "slt", input: "x", stream_format: "ndjson" }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: "invalid_request", param: "stream_format" } });
  });
});
