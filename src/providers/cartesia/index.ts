import { cloudProvider } from "../cloud-home.ts";
import { CARTESIA } from "./catalogue.ts";
import { CartesiaStt } from "./stt.ts";
import { CartesiaTts } from "./tts.ts";

export const cartesia = cloudProvider({
  catalogue: CARTESIA,
  defaultBaseUrl: "https://api.cartesia.ai",
  tts: (o) => new CartesiaTts(o),
  // No turn detector: the session wraps its streams in the router's turns (sessions/router-turns.ts).
  stt: (o) => new CartesiaStt(o),
});
