import { cloudProvider } from "../cloud-home.ts";
import { CARTESIA, CARTESIA_MODELS } from "./catalogue.ts";
import { CartesiaStt } from "./stt.ts";
import { CartesiaTts } from "./tts.ts";

export const cartesia = cloudProvider({
  id: "cartesia",
  env: { apiKey: "CARTESIA_API_KEY", baseUrl: "CARTESIA_BASE_URL" },
  defaultBaseUrl: "https://api.cartesia.ai",
  spec: CARTESIA,
  models: CARTESIA_MODELS,
  tts: (o) => new CartesiaTts(o),
  // The audio pool runs the router VAD, which decides Ink-Whisper's turns.
  stt: (o, _settings, runtime) => new CartesiaStt(o, runtime.audio),
});
