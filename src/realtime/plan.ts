import type { Catalogue } from "../catalogue/catalogue.ts";
import { ApiError } from "../errors.ts";
import type { SttProvider } from "../providers/stt-types.ts";
import type { Pipeline, PipelineStage } from "./profiles.ts";
import { DEFAULT_OUTPUT_FORMAT, OUTPUT_FORMATS, type OutputFormat } from "./output-formats.ts";
import { planWithNames } from "../planning/members.ts";
import { planStt } from "../planning/plan-stt.ts";
import type { SttPlan, SttRequest } from "../planning/stt-request.ts";
import { nativeSttParam, readSttQuery, type SttFields } from "../planning/stt-fields.ts";
import { planTts } from "../planning/plan-tts.ts";
import type { TtsPlan } from "../planning/tts-request.ts";
import { NO_PREFERENCES } from "../routing/preferences.ts";

// A realtime profile's pipeline as the sessions it runs: the STT stage's `input` speaks the
// `/v1/stt` query's vocabulary (`audio_format`, `language`, turn settings …) and is read as that
// query is; both stages are planned as typed requests, with the same checks and routing as the
// native channels, and refusals name the query's parameters.

export interface ConversationPlan {
  stt: SttPlan;
  tts: TtsPlan;
  output: OutputFormat;
  greeting?: string;
  partialPrompts: boolean;
}

/** A stage's `input` object as the query fields it stands for: arrays are repeated keys. */
function inputFields(input: Record<string, unknown>): SttFields {
  const values = (name: string) => {
    const v = input[name];
    if (v === undefined || v === null) return [];
    return (Array.isArray(v) ? v : [v]).map(String);
  };
  return { get: (name) => values(name)[0] ?? null, getAll: values, keys: () => Object.keys(input).filter((k) => values(k).length) };
}

function sttRequestOf(stage: PipelineStage): SttRequest {
  const read = readSttQuery(inputFields({ audio_format: "pcm_16000", interim_results: true, ...stage.input }));
  return { ...read, model: stage.model, provider: stage.provider || undefined, options: { ...stage.provider_options, ...read.options }, fallbacks: stage.fallbacks };
}

export function planConversation(catalogue: Catalogue, sttProvider: (id: string) => SttProvider | undefined, pipeline: Pipeline): ConversationPlan {
  const input = pipeline.stt.input;
  if (input.event_format !== undefined && input.event_format !== "normalized") {
    throw new ApiError("invalid_request", "a conversation reads normalized transcripts: pipeline.stt.input.event_format must be absent", { param: "pipeline.stt.input.event_format" });
  }
  const stt = planWithNames(() => planStt(catalogue, sttProvider, sttRequestOf(pipeline.stt)), nativeSttParam);
  const { model, provider, voice, provider_options, fallbacks } = pipeline.tts;
  const tts = planTts(catalogue, { model, provider: provider || undefined, voice: voice || undefined, format: "pcm", options: provider_options, preferences: NO_PREFERENCES, fallbacks });
  return {
    stt,
    tts,
    output: OUTPUT_FORMATS[pipeline.tts.format ?? DEFAULT_OUTPUT_FORMAT]!,
    ...(pipeline.greeting ? { greeting: pipeline.greeting } : {}),
    partialPrompts: pipeline.upstream.partial_prompts === true,
  };
}
