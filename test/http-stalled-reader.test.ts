import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../src/config.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { ffprobe } from "./helpers/ffprobe.ts";
import { RawHttpRequest } from "./helpers/raw-client.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

// A client that stops reading a streamed speech answer (an audio element whose buffer is full, a
// player on pause) only slows it to its pace, for up to HTTP_STALL_TIMEOUT_S (default 120 s).
// Bun's own idle timeout (10 s) closed such an answer mid-body once the socket had been quiet for
// it: a pause of 40 s lost most of the audio.

const TEXT = "The quick brown fox jumps over the lazy dog, again and again. ".repeat(60);
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop(0));

function speech(key: string, on = server) {
  return RawHttpRequest.post(
    `${on.url}/oai/audio/speech`,
    { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    JSON.stringify({ model: "flite", voice: "kal", input: TEXT, response_format: "wav" }),
  );
}

/** The answer read to its end after `ms` of reading nothing. */
async function readAfter(ms: number, answer: RawHttpRequest): Promise<RawHttpRequest> {
  answer.pause();
  await Bun.sleep(ms);
  answer.resume();
  await answer.done;
  return answer;
}

describe("a client that stops reading a streamed answer", () => {
  test("paused for 45 s, then read: the whole answer arrives, decodes to the same audio as one read at once, and is billed once", async () => {
    const straight = await speech(server.key);
    await straight.done;
    expect(straight.complete).toBe(true);

    const { key, tenantId } = await fundedAccount(server);
    const paused = await readAfter(45_000, await speech(key));
    expect(paused.status).toBe(200);
    expect(paused.complete).toBe(true);
    expect(paused.bodyBytes).toBe(straight.bodyBytes);
    const [heard, expected] = await Promise.all([ffprobe(Buffer.concat(paused.body), "wav"), ffprobe(Buffer.concat(straight.body), "wav")]);
    expect(heard.seconds).toBeGreaterThan(60);
    expect(heard.seconds).toBeCloseTo(expected.seconds, 2);
    expect(await lastActivity(server, tenantId)).toMatchObject({ surface: "oai", status: "completed", usageAmount: TEXT.length });
  }, 120_000);
});

describe("a client that reads nothing for longer than HTTP_STALL_TIMEOUT_S", () => {
  test("its answer is closed mid-body, and it is billed as a client that left: the text the provider had been given", async () => {
    const short = await startTestServer({ HTTP_STALL_TIMEOUT_S: "5" });
    try {
      const { key, tenantId } = await fundedAccount(short);
      const answer = await speech(key, short);
      // The answer has begun (its head read) before the client stops reading: a busy machine may take seconds to the first audio.
      while (!answer.status) await Bun.sleep(10);
      const res = await readAfter(30_000, answer);
      expect(res.status).toBe(200);
      expect(res.complete).toBe(false);
      const record = await lastActivity(short, tenantId);
      expect(record).toMatchObject({ surface: "oai", outcome: "client_left" });
      expect(record.usageAmount).toBeGreaterThan(0);
      expect(record.usageAmount).toBeLessThan(TEXT.length);
    } finally {
      await short.stop(0);
    }
  }, 90_000);
});

describe("HTTP_STALL_TIMEOUT_S", () => {
  test("120 s unless set; 0 (no limit) to 255 (Bun's longest idle timeout)", () => {
    expect(loadConfig({}).httpStallTimeoutS).toBe(120);
    expect(loadConfig({ HTTP_STALL_TIMEOUT_S: "0" }).httpStallTimeoutS).toBe(0);
    expect(loadConfig({ HTTP_STALL_TIMEOUT_S: "255" }).httpStallTimeoutS).toBe(255);
    expect(() => loadConfig({ HTTP_STALL_TIMEOUT_S: "256" })).toThrow("HTTP_STALL_TIMEOUT_S must be at most 255");
    expect(() => loadConfig({ HTTP_STALL_TIMEOUT_S: "-1" })).toThrow("HTTP_STALL_TIMEOUT_S");
  });
});
