import { cloudProvider } from "../cloud-home.ts";
import { OPENAI } from "./catalogue.ts";
import { OpenAiStt } from "./stt.ts";
import { OpenAiTts } from "./tts.ts";

export const openai = cloudProvider({
  catalogue: OPENAI,
  defaultBaseUrl: "https://api.openai.com/v1",
  tts: (o) => new OpenAiTts(o),
  stt: (o) => new OpenAiStt(o),
});
