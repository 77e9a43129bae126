import { cloudProvider } from "../cloud-home.ts";
import { ASSEMBLYAI, ASSEMBLYAI_MODELS } from "./catalogue.ts";
import { AssemblyAiStt } from "./stt.ts";

export const assemblyai = cloudProvider({
  id: "assemblyai",
  defaultBaseUrl: "https://api.assemblyai.com",
  spec: ASSEMBLYAI,
  models: ASSEMBLYAI_MODELS,
  /** `streamingUrl`: the Universal-Streaming WebSocket; unset = derived from the base URL. */
  extra: (env) => ({ streamingUrl: env.text("ASSEMBLYAI_STREAMING_URL") || undefined }),
  stt: (o, { streamingUrl }) => new AssemblyAiStt({ ...o, streamingUrl }),
});
