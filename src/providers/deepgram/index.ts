import { cloudProvider } from "../cloud-home.ts";
import { DEEPGRAM } from "./catalogue.ts";
import { DeepgramStt } from "./stt.ts";
import { DeepgramTts } from "./tts.ts";

export const deepgram = cloudProvider({
  catalogue: DEEPGRAM,
  defaultBaseUrl: "https://api.deepgram.com",
  tts: (o) => new DeepgramTts(o),
  stt: (o) => new DeepgramStt(o),
});
