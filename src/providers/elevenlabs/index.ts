import { cloudProvider } from "../cloud-home.ts";
import { ELEVENLABS } from "./catalogue.ts";
import { ElevenLabsCloning } from "./cloning.ts";
import { ElevenLabsStt } from "./stt.ts";
import { ElevenLabsTts } from "./tts.ts";

export const elevenlabs = cloudProvider({
  catalogue: ELEVENLABS,
  defaultBaseUrl: "https://api.elevenlabs.io",
  // Instant voice cloning rides on the TTS adapter (TtsProvider.cloning).
  tts: (o) => Object.assign(new ElevenLabsTts(o), { cloning: new ElevenLabsCloning(o) }),
  stt: (o) => new ElevenLabsStt(o),
});
