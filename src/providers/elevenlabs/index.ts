import { cloudProvider } from "../cloud-home.ts";
import { ELEVENLABS, ELEVENLABS_MODELS } from "./catalogue.ts";
import { ElevenLabsStt } from "./stt.ts";
import { ElevenLabsTts } from "./tts.ts";

export const elevenlabs = cloudProvider({
  id: "elevenlabs",
  defaultBaseUrl: "https://api.elevenlabs.io",
  spec: ELEVENLABS,
  models: ELEVENLABS_MODELS,
  tts: (o) => new ElevenLabsTts(o),
  stt: (o) => new ElevenLabsStt(o),
});
