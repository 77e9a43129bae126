import { describe, expect, test } from "bun:test";
import type { AudioPool } from "../../src/pools/audio-pool.ts";
import type { EnginePool } from "../../src/pools/engine-pool.ts";
import type { FilePool } from "../../src/pools/file-pool.ts";
import { loadConfig } from "../../src/config.ts";
import { ApiError } from "../../src/errors.ts";
import { providerAdapters } from "../../src/providers/registry.ts";
import type { CloningOptions } from "../../src/providers/cloning-http.ts";
import type { CloneFile, CloneRequest, VoiceCloning } from "../../src/providers/voice-cloning.ts";
import { SLOW_CLONE_MS, type CloningFault } from "../fakes/cloning.ts";
import { speak, wavFile } from "./speech.ts";

// What the cloning adapter tests share: the adapter as the server builds it, recordings, failures
// as ApiErrors, and the faults every provider's adapter meets alike.

/** The cloning of a provider's TTS adapter as the registry builds it from these variables (its key and base URL). */
export function servedCloning(provider: string, env: Record<string, string>): VoiceCloning {
  const runtime = { engines: {} as EnginePool, audio: {} as AudioPool, files: {} as FilePool, upstream: { connectTimeoutMs: 1000, idleTimeoutMs: 1000, keepAliveMs: 4000 } };
  const tts = providerAdapters(loadConfig(env).providers, {}, runtime).tts.find((a) => a.id === provider);
  expect(tts?.cloning).toBeDefined();
  return tts!.cloning!;
}

/** A recording of real speech as a client uploads it: a WAV file. */
export function speechRecording(name = "take-1.wav", text = "My voice sounds like this when I read a sentence aloud."): CloneFile {
  return { name, type: "audio/wav", data: wavFile(speak(text)) };
}

/** The ApiError a call fails with, as code, HTTP status and message; fails the test when the call succeeds or throws something else. */
export async function apiFailure(p: Promise<unknown>): Promise<{ code: string; status: number; message: string }> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  const { code, status, message } = err as ApiError;
  return { code, status, message };
}

/** A WAV recording as the official SDKs upload it: a File. */
export const wavUpload = (bytes: Uint8Array, name: string) => new File([bytes], name, { type: "audio/wav" });

/** Recordings a clone must refuse, each to be uploaded as notes.wav, with what its refusal says. */
export const unusableRecordings = (): [Uint8Array, string][] => [
  [new TextEncoder().encode("these are not the droids"), "notes.wav is not an audio file"],
  [new Uint8Array(0), "notes.wav is empty"],
  [wavFile(speak("Hi.").subarray(0, 4000)), "notes.wav holds 0.25 s of audio"],
];

/** What an SDK call is rejected with, or undefined when it succeeds. */
export const rejectionOf = <E>(p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: E) => e,
  );

export interface CloningFaultCase {
  provider: string;
  /** The adapter as the server builds it, against the fake. */
  cloning: VoiceCloning;
  /** The adapter with some of its options changed (a base URL, the clone's bound). */
  adapter(overrides: Partial<CloningOptions>): VoiceCloning;
  fake: { fault(f: "401" | "429" | "500" | "malformed" | CloningFault): void; clonedVoices: Map<string, { name: string }> };
  /** A request the provider takes, under this name. */
  request(name: string): CloneRequest;
  /** The error code the fake answers each injected status with. */
  codes: Record<"401" | "429" | "500", string>;
}

/** The failures every cloning adapter meets alike: the provider's own (upstream_error, whatever the call), garbled answers, silence, slowness. */
export function describeCloningFaults(c: CloningFaultCase): void {
  const { provider, cloning, fake } = c;
  const clearFake = async () => {
    for (const id of fake.clonedVoices.keys()) await cloning.remove(id);
  };

  describe(`${provider} cloning faults`, () => {
    test("500, 429 and a refused key are the provider's failure (upstream_error, its code only), not the recordings'", async () => {
      for (const status of ["500", "429", "401"] as const) {
        fake.fault(status);
        expect(await apiFailure(cloning.clone(c.request("Later")))).toEqual({ code: "upstream_error", status: 502, message: `${provider} answered ${status} (${c.codes[status]})` });
      }
      expect(fake.clonedVoices.size).toBe(0);
    });

    test("status and remove when the provider fails are upstream_error; the voice stays", async () => {
      const made = await cloning.clone(c.request("Kept"));
      fake.fault("500");
      expect(await apiFailure(cloning.status(made.providerVoiceId))).toMatchObject({ code: "upstream_error", status: 502 });
      fake.fault("500");
      expect(await apiFailure(cloning.remove(made.providerVoiceId))).toMatchObject({ code: "upstream_error", status: 502 });
      expect(fake.clonedVoices.has(made.providerVoiceId)).toBe(true);
      await clearFake();
    });

    test("an answer that is not JSON, and a provider nobody answers at, are upstream_error", async () => {
      fake.fault("malformed");
      expect(await apiFailure(cloning.clone(c.request("Garbled")))).toEqual({ code: "upstream_error", status: 502, message: `${provider} answered something that is not JSON` });
      await clearFake();
      const closed = Bun.serve({ port: 0, fetch: () => new Response() });
      const unreachable = c.adapter({ baseUrl: `http://127.0.0.1:${closed.port}` });
      closed.stop(true);
      for (const call of [unreachable.clone(c.request("Nowhere")), unreachable.status("x"), unreachable.remove("x")]) {
        expect(await apiFailure(call)).toMatchObject({ code: "upstream_error", message: expect.stringMatching(new RegExp(`^${provider} could not be reached`)) });
      }
    });

    test("slow processing: a clone answered within its bound is waited for; past it, upstream_error while the voice may yet appear", async () => {
      fake.fault("slow");
      const started = performance.now();
      const made = await c.adapter({ cloneTimeoutMs: SLOW_CLONE_MS * 3 }).clone(c.request("Patient"));
      expect(performance.now() - started).toBeGreaterThanOrEqual(SLOW_CLONE_MS - 20);
      expect(await cloning.status(made.providerVoiceId)).toEqual({ status: made.status });
      await clearFake();

      fake.fault("slow");
      const hasty = c.adapter({ cloneTimeoutMs: SLOW_CLONE_MS / 3 });
      expect(await apiFailure(hasty.clone(c.request("Hasty")))).toEqual({ code: "upstream_error", status: 502, message: `${provider} did not answer within ${SLOW_CLONE_MS / 3} ms` });
      await Bun.sleep(SLOW_CLONE_MS);
      // The provider finished it all the same: why a failed clone's voice is worth looking for before a retry.
      expect([...fake.clonedVoices.values()].map((v) => v.name)).toEqual(["Hasty"]);
      await clearFake();
    });
  });
}
