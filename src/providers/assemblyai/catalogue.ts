import { declareCloud } from "../../catalogue/declare.ts";

// Universal-Streaming lists at $0.15/hour; pre-recorded Universal at $0.15/hour, Slam-1 at $0.27/hour
// (pre-recorded jobs are queued upstream: batch).

const STREAMING = { streaming: true, synchronous: false, batch: false };
const QUEUED = { streaming: false, synchronous: true, batch: true };

export const ASSEMBLYAI = declareCloud("assemblyai", {
  name: "AssemblyAI",
  requiresVoice: false,
  defaults: { stt: { model: "universal-streaming-english", synchronousModel: "universal" } },
  stt: [
    { id: "universal-streaming-english", name: "Universal-Streaming (English)", ...STREAMING, price: { amount: "0.15", per: "hour" } },
    { id: "universal-streaming-multilingual", name: "Universal-Streaming (multilingual)", ...STREAMING, price: { amount: "0.15", per: "hour" } },
    { id: "universal", name: "Universal", aliases: ["best"], ...QUEUED, price: { amount: "0.15", per: "hour" } },
    { id: "slam-1", name: "Slam-1", ...QUEUED, price: { amount: "0.27", per: "hour" } },
  ],
});
