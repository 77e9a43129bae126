import type { ModelSpec, ProviderSpec } from "../../catalogue/types.ts";

// Universal-Streaming lists at $0.15/hour; pre-recorded Universal at $0.15/hour, Slam-1 at $0.27/hour
// (pre-recorded jobs are queued upstream: batch).

export const ASSEMBLYAI_MODELS: ModelSpec[] = [
  { canonical: "assemblyai/universal-streaming-english", name: "Universal-Streaming (English)", capability: "stt", aliases: [] },
  { canonical: "assemblyai/universal-streaming-multilingual", name: "Universal-Streaming (multilingual)", capability: "stt", aliases: [] },
  { canonical: "assemblyai/universal", name: "Universal", capability: "stt", aliases: ["best"] },
  { canonical: "assemblyai/slam-1", name: "Slam-1", capability: "stt", aliases: [] },
];

export const ASSEMBLYAI: ProviderSpec = {
  id: "assemblyai",
  name: "AssemblyAI",
  kind: "cloud",
  requiresVoice: false,
  defaults: { stt: { model: "universal-streaming-english", synchronousModel: "universal" } },
  bindings: [
    {
      capability: "stt",
      id: "universal-streaming-english",
      canonical: "assemblyai/universal-streaming-english",
      streaming: true,
      synchronous: false,
      batch: false,
      price: { amount: "0.15", per: "hour" },
    },
    {
      capability: "stt",
      id: "universal-streaming-multilingual",
      canonical: "assemblyai/universal-streaming-multilingual",
      streaming: true,
      synchronous: false,
      batch: false,
      price: { amount: "0.15", per: "hour" },
    },
    { capability: "stt", id: "universal", canonical: "assemblyai/universal", streaming: false, synchronous: true, batch: true, price: { amount: "0.15", per: "hour" } },
    { capability: "stt", id: "slam-1", canonical: "assemblyai/slam-1", streaming: false, synchronous: true, batch: true, price: { amount: "0.27", per: "hour" } },
  ],
};
