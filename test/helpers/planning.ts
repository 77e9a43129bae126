import type { BindingSpec, ProviderSpec } from "../../src/catalogue/types.ts";
import { ApiError } from "../../src/errors.ts";

// What the planner tests share: the refusal a planning call throws, and a catalogue provider
// serving one model.

/** The `ApiError` `fn` throws; fails the test when it returns or throws anything else. */
export function refusalOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}

/** A TTS binding that streams and answers whole, in PCM and MP3, unless `over` says otherwise. */
export const ttsBinding = (id: string, canonical: string, over: Partial<BindingSpec> = {}): BindingSpec => ({
  capability: "tts",
  id,
  canonical,
  streaming: true,
  synchronous: true,
  formats: ["pcm", "mp3"],
  ...over,
});

/** A cloud provider `id` with one binding of `shared/<model>` (`<id>-<model>`). */
export function providerSpec(id: string, binding: Omit<BindingSpec, "id" | "canonical">, model: string, over: Partial<ProviderSpec> = {}): ProviderSpec {
  return { id, name: id, kind: "cloud", requiresVoice: false, defaults: {}, bindings: [{ ...binding, id: `${id}-${model}`, canonical: `shared/${model}` } as BindingSpec], ...over };
}
