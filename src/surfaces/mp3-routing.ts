import type { Binding, Mp3Format } from "../catalogue/types.ts";
import { ApiError } from "../errors.ts";

/**
 * The candidates for an MP3 the caller asked for (its rate, and its bitrate where the API names
 * one): the providers' own MP3, passed through untouched, when every candidate streams exactly
 * that; otherwise their PCM, which the surface encodes at the asked rate and bitrate (an MP3 at
 * another rate would break the promise). `route` resolves the request for a session format.
 */
export function routeMp3(route: (format: "pcm" | "mp3") => Binding[], asked: Mp3Format): { format: "pcm" | "mp3"; candidates: Binding[] } {
  const native = emittingMp3(route);
  if (native?.every(({ provider: { ttsMp3: own } }) => own?.sampleRate === asked.sampleRate && (asked.kbps === undefined || own.kbps === asked.kbps))) {
    return { format: "mp3", candidates: native };
  }
  return { format: "pcm", candidates: route("pcm") };
}

/** The candidates that can emit MP3, or undefined when none of them can. */
function emittingMp3(route: (format: "pcm" | "mp3") => Binding[]): Binding[] | undefined {
  try {
    return route("mp3");
  } catch (err) {
    if (err instanceof ApiError && err.code === "invalid_output_format") return undefined;
    throw err;
  }
}
