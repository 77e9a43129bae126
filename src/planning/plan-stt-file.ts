import type { Catalogue } from "../catalogue/catalogue.ts";
import type { Binding } from "../catalogue/types.ts";
import { ApiError } from "../errors.ts";
import type { SttProvider } from "../providers/stt-types.ts";
import { byLink, inLink, linkModel, type ModelChoice } from "../routing/candidate.ts";
import type { ProviderPreferences } from "../routing/preferences.ts";
import { resolve } from "../routing/resolve.ts";
import type { StreamingPlan } from "../sessions/file-stream.ts";
import type { FilePlan } from "../sessions/file-transcription.ts";
import { planStt } from "./plan-stt.ts";

/**
 * An audio file to transcribe, as every file surface reads it from its own wire form (native
 * `/v1/stt/transcriptions`, `/el` speech-to-text, `/oai` transcriptions).
 */
export interface SttFileRequest {
  /** Bare provider id, canonical slug, alias, or `{provider}/{id}`. */
  model?: string;
  /** Pins one provider. */
  provider?: string;
  language?: string;
  preferences: ProviderPreferences;
  /** Models tried after the primary's providers, for the file API and the streaming session alike. */
  fallbacks?: ModelChoice[];
  /** The caller takes segments as they are recognized (`/oai`'s `stream: true`): a streaming session is planned too. */
  live?: boolean;
}

/** PCM rates a file is decoded to for a streaming session: the first its model's providers take. */
const RATES = ["pcm_16000", "pcm_24000"] as const;

/**
 * Plans a file transcription once, for the session to run (`FilePlan`): the providers' file APIs
 * to try and, for a live caller, the streaming session its model may run. Pure. Why no file API
 * can serve (an unknown model, none that transcribes files) is decided here and told only when
 * the file goes that way: a live caller's file that streams never asks.
 */
export function planSttFile(catalogue: Catalogue, sttProvider: (id: string) => SttProvider | undefined, req: SttFileRequest): FilePlan {
  const files = fileApis(catalogue, sttProvider, req);
  return {
    fileCandidates: () => {
      if ("refused" in files) throw files.refused;
      return files.candidates;
    },
    ...(req.live ? { streaming: streamingPlan(catalogue, sttProvider, req) } : {}),
  };
}

/** The routed candidates whose adapter transcribes files in this build, in order, or why there are none. */
function fileApis(catalogue: Catalogue, sttProvider: (id: string) => SttProvider | undefined, req: SttFileRequest): { candidates: Binding[] } | { refused: unknown } {
  try {
    const routed = resolve(catalogue, { capability: "stt", model: req.model, provider: req.provider, mode: "synchronous", preferences: req.preferences, fallbacks: req.fallbacks });
    const candidates = byLink(routed).flatMap((link) =>
      inLink(link[0].fallback, () => {
        const able = link.filter((b) => sttProvider(b.provider.id)?.transcribe);
        if (able.length === 0) throw new ApiError("no_matching_provider", `no provider in this build transcribes files with ${linkModel(link[0], req)}`);
        return able;
      }),
    );
    return { candidates };
  } catch (refused) {
    return { refused };
  }
}

/** The model as a `/v1/stt` session would run it, planned and checked as that channel's are. */
function streamingPlan(catalogue: Catalogue, sttProvider: (id: string) => SttProvider | undefined, { model, language, preferences, fallbacks }: SttFileRequest): StreamingPlan | undefined {
  for (const audioFormat of RATES) {
    try {
      // Only final segments are sent: a recognizer need not make interim ones.
      return { ...planStt(catalogue, sttProvider, { model, audioFormat, portable: language ? { language } : {}, options: {}, preferences, fallbacks }), interim: false };
    } catch (err) {
      // Not at this rate, or not at all: the file path's routing tells why, if it cannot serve either.
      if (!(err instanceof ApiError)) throw err;
    }
  }
  return undefined;
}
