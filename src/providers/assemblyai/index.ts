import { cloudProvider } from "../cloud-home.ts";
import { ASSEMBLYAI } from "./catalogue.ts";
import { AssemblyAiStt } from "./stt.ts";

export const assemblyai = cloudProvider({
  catalogue: ASSEMBLYAI,
  defaultBaseUrl: "https://api.assemblyai.com",
  /** `streamingUrl`: the Universal-Streaming WebSocket; unset = derived from the base URL. */
  extra: (env) => ({ streamingUrl: env.text("ASSEMBLYAI_STREAMING_URL") || undefined }),
  stt: (o, { streamingUrl }) => new AssemblyAiStt({ ...o, streamingUrl }),
});
