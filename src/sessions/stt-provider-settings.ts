import type { SttFamily, SttStreamRequest } from "../providers/stt-types.ts";
import type { SttInputConfig, SttSessionSetup } from "./stt-events.ts";

// How a streaming STT session's settings reach the family of the provider that serves it: the
// stream it asks the provider for, and the input as it then runs (told to the client).

/** Whether the router decides the turns of `family` (its VAD reads only declared little-endian PCM), and whether inside the recognizer. */
export function routerTurnsOf(setup: SttSessionSetup, family: SttFamily): { routerTurns: boolean; vadInside: boolean } {
  const routerTurns = family.turnDetector === "none" && setup.audioFormat.startsWith("pcm");
  return { routerTurns, vadInside: routerTurns && (family.routerVadInside ?? false) };
}

export function streamRequest(setup: SttSessionSetup, model: string, family: SttFamily, interim: boolean, signal: AbortSignal): SttStreamRequest {
  const { vadInside } = routerTurnsOf(setup, family);
  return {
    model,
    audioFormat: setup.audioFormat,
    channels: setup.channels,
    language: setup.language,
    interim,
    commitStrategy: setup.commitStrategy,
    turnDetection: setup.turnDetection,
    routerVad: vadInside ? setup.vad : undefined,
    vadScores: vadInside ? setup.vadScores : undefined,
    portable: setup.portable,
    options: setup.options,
    signal,
  };
}

/** The input as `family` takes the session's settings. */
export function inputConfig(setup: SttSessionSetup, family: SttFamily, interim: boolean): SttInputConfig {
  return {
    audioFormat: setup.audioFormat,
    sampleRate: setup.sampleRate,
    channels: setup.channels,
    language: setup.language ?? null,
    interimResults: interim,
    commitStrategy: setup.commitStrategy,
    turnDetection: setup.turnDetection === "auto" ? family.turnStyles[0]! : setup.turnDetection,
    turnDetector: family.turnDetector === "none" ? "router_vad" : "provider",
  };
}
