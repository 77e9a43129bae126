import { cloudProvider } from "../cloud-home.ts";
import { CARTESIA } from "./catalogue.ts";
import { CartesiaCloning } from "./cloning.ts";
import { CartesiaStt } from "./stt.ts";
import { CartesiaTts } from "./tts.ts";

export const cartesia = cloudProvider({
  catalogue: CARTESIA,
  defaultBaseUrl: "https://api.cartesia.ai",
  // Instant voice cloning rides on the TTS adapter (TtsProvider.cloning).
  tts: (o) => Object.assign(new CartesiaTts(o), { cloning: new CartesiaCloning(o) }),
  // No turn detector: the session wraps its streams in the router's turns (sessions/router-turns.ts).
  stt: (o) => new CartesiaStt(o),
});
