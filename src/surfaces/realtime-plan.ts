import type { Catalogue } from "../catalogue/catalogue.ts";
import { ApiError } from "../errors.ts";
import type { SttProvider } from "../providers/types.ts";
import type { Pipeline, PipelineStage } from "../realtime/profiles.ts";
import { DEFAULT_OUTPUT_FORMAT, OUTPUT_FORMATS, type OutputFormat } from "../realtime/output-formats.ts";
import { planSttSession, type SttPlan } from "./native/stt-query.ts";
import { planTts } from "../planning/plan-tts.ts";
import type { TtsPlan } from "../planning/tts-request.ts";
import { NO_PREFERENCES } from "../routing/preferences.ts";

// A realtime profile's pipeline as the sessions it runs: the STT stage read as a `/v1/stt` query
// (its `input` members are that query's parameters: `audio_format`, `language`, turn settings …)
// and the TTS stage as a `/v1/tts` query, with the same checks and routing as those channels.

export interface ConversationPlan {
  stt: SttPlan;
  tts: TtsPlan;
  output: OutputFormat;
  greeting?: string;
  partialPrompts: boolean;
}

function stageQuery(stage: PipelineStage, extra: Record<string, unknown>): URLSearchParams {
  const params = new URLSearchParams({ model: stage.model });
  if (stage.provider) params.set("provider", stage.provider);
  if (stage.voice) params.set("voice", stage.voice);
  for (const [k, v] of Object.entries(stage.provider_options)) params.set(`provider_options[${k}]`, v);
  for (const [k, v] of Object.entries(extra)) {
    if (Array.isArray(v)) for (const item of v) params.append(k, String(item));
    else if (v !== undefined && v !== null) params.set(k, String(v));
  }
  return params;
}

export function planConversation(catalogue: Catalogue, sttProvider: (id: string) => SttProvider | undefined, pipeline: Pipeline): ConversationPlan {
  const input = pipeline.stt.input;
  if (input.event_format !== undefined && input.event_format !== "normalized") {
    throw new ApiError("invalid_request", "a conversation reads normalized transcripts: pipeline.stt.input.event_format must be absent", { param: "pipeline.stt.input.event_format" });
  }
  const stt = planSttSession(catalogue, sttProvider, stageQuery(pipeline.stt, { audio_format: "pcm_16000", interim_results: true, ...input }));
  const { model, provider, voice, provider_options } = pipeline.tts;
  const tts = planTts(catalogue, { model, provider: provider || undefined, voice: voice || undefined, format: "pcm", options: provider_options, preferences: NO_PREFERENCES });
  return {
    stt,
    tts,
    output: OUTPUT_FORMATS[pipeline.tts.format ?? DEFAULT_OUTPUT_FORMAT]!,
    ...(pipeline.greeting ? { greeting: pipeline.greeting } : {}),
    partialPrompts: pipeline.upstream.partial_prompts === true,
  };
}
