import { cloudProvider } from "../cloud-home.ts";
import { DEEPGRAM, DEEPGRAM_MODELS } from "./catalogue.ts";
import { DeepgramStt } from "./stt.ts";
import { DeepgramTts } from "./tts.ts";

export const deepgram = cloudProvider({
  id: "deepgram",
  defaultBaseUrl: "https://api.deepgram.com",
  spec: DEEPGRAM,
  models: DEEPGRAM_MODELS,
  tts: (o) => new DeepgramTts(o),
  stt: (o) => new DeepgramStt(o),
});
