import { afterAll, expect, test } from "bun:test";
import { FAKE_OPENAI_KEY } from "./fakes/openai.ts";

// The fakes' processes (benchmarks) are broken and healed while they run through a control port of
// their own (fakes/fault-control-server.ts): the fault reaches the fake's port, the arrivals are
// counted, and a fake that refuses every connection is still healed on the same port.

const proc = Bun.spawn(["bun", "test/fakes/openai-server.ts"], { stdout: "pipe", stderr: "inherit" });
afterAll(() => proc.kill());

async function info(): Promise<{ url: string; control: string }> {
  const reader = proc.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) text += new TextDecoder().decode((await reader.read()).value);
  reader.releaseLock();
  return JSON.parse(text.split("\n")[0]);
}

const speech = (url: string) =>
  fetch(`${url}/audio/speech`, {
    method: "POST",
    headers: { authorization: `Bearer ${FAKE_OPENAI_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "tts-1", voice: "alloy", input: "Hello.", response_format: "pcm" }),
  });
const control = (base: string, body: unknown) => fetch(`${base}/fault`, { method: "POST", body: JSON.stringify(body) });
const arrivals = async (base: string) => ((await (await fetch(`${base}/arrivals`)).json()) as { arrivals: number }).arrivals;

test("a fake in its own process answers 500, refuses and heals as its control port says, counting what reaches it", async () => {
  const { url, control: base } = await info();
  expect((await speech(url)).status).toBe(200);
  expect(await arrivals(base)).toBe(1);

  expect((await control(base, { kind: "status500" })).status).toBe(204);
  const refused = await speech(url);
  expect(refused.status).toBe(500);
  expect(((await refused.json()) as { error: { type: string } }).error.type).toBe("server_error");

  await control(base, { kind: "refuse" });
  await expect(speech(url)).rejects.toThrow();
  await control(base, null);
  expect((await speech(url)).status).toBe(200);
  expect(await arrivals(base)).toBe(4);
  // The OpenAI fake has no mid-stream setter on its control port.
  expect((await fetch(`${base}/mid-stream`, { method: "POST", body: "null" })).status).toBe(404);
});
