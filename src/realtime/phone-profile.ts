import type { Catalogue } from "../catalogue/catalogue.ts";
import type { SttProvider } from "../providers/stt-types.ts";
import { type ConversationPlan, planConversation } from "./plan.ts";
import type { RealtimeProfile } from "./profiles.ts";

// A profile as a phone call runs it: the caller's audio is G.711 µ-law at 8 kHz, and so is what
// the carrier plays. The recognizer hears µ-law as it comes when the profile's STT model takes it
// (no conversion); otherwise the profile's own input format is kept and the call's surface
// converts (the embedded PocketSphinx hears 16 kHz PCM). Answers are always spoken as `ulaw_8000`.

export interface PhonePlan {
  profile: RealtimeProfile;
  conversation: ConversationPlan;
}

function withFormats(profile: RealtimeProfile, input: Record<string, unknown>): RealtimeProfile {
  const { stt, tts } = profile.pipeline;
  return { ...profile, pipeline: { ...profile.pipeline, stt: { ...stt, input }, tts: { ...tts, format: "ulaw_8000" } } };
}

export function phonePlan(catalogue: Catalogue, sttProvider: (id: string) => SttProvider | undefined, profile: RealtimeProfile): PhonePlan {
  const ulaw = withFormats(profile, { ...profile.pipeline.stt.input, audio_format: "ulaw_8000" });
  try {
    return { profile: ulaw, conversation: planConversation(catalogue, sttProvider, ulaw.pipeline) };
  } catch {
    const own = withFormats(profile, profile.pipeline.stt.input);
    return { profile: own, conversation: planConversation(catalogue, sttProvider, own.pipeline) };
  }
}
