import { cloudProvider } from "../cloud-home.ts";
import { OPENAI, OPENAI_MODELS } from "./catalogue.ts";
import { OpenAiStt } from "./stt.ts";
import { OpenAiTts } from "./tts.ts";

export const openai = cloudProvider({
  id: "openai",
  defaultBaseUrl: "https://api.openai.com/v1",
  spec: OPENAI,
  models: OPENAI_MODELS,
  tts: (o) => new OpenAiTts(o),
  stt: (o) => new OpenAiStt(o),
});
