import { cloudProvider } from "../cloud-home.ts";
import { ELEVENLABS } from "./catalogue.ts";
import { ElevenLabsStt } from "./stt.ts";
import { ElevenLabsTts } from "./tts.ts";

export const elevenlabs = cloudProvider({
  catalogue: ELEVENLABS,
  defaultBaseUrl: "https://api.elevenlabs.io",
  tts: (o) => new ElevenLabsTts(o),
  stt: (o) => new ElevenLabsStt(o),
});
