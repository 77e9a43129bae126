import type { Catalogue } from "../catalogue/catalogue.ts";
import type { Mp3Format } from "../catalogue/types.ts";
import { ApiError } from "../errors.ts";
import { byLink, type Candidate, inLink } from "../routing/candidate.ts";
import { router } from "../routing/resolve.ts";
import { refusal } from "./members.ts";
import type { TtsPlan, TtsRequest } from "./tts-request.ts";

/**
 * Routes a TTS request once and decides each of its questions once: the model (routing), the
 * format the session carries, the speed. Pure; throws `ApiError` naming the request's member.
 * The voice is the next, async step (`plan-voice.ts`: the providers' lists and the tenant), which
 * every surface runs on this plan.
 */
export function planTts(catalogue: Catalogue, req: TtsRequest): TtsPlan {
  const route = router(catalogue, { capability: "tts", model: req.model, provider: req.provider, voice: req.voice, mode: "streaming", preferences: req.preferences, fallbacks: req.fallbacks });
  const asked = req.format;
  const { format, candidates } = typeof asked === "string" ? { format: asked, candidates: route(asked) } : mp3Candidates(route, asked.mp3, asked.requireMp3Provider);
  return { candidates: withSpeed(candidates, req.speed), voice: req.voice, format, ...speedOfOptions(req.options, req.speed) };
}

/**
 * The candidates for an MP3 the caller asked for: the providers' own MP3, passed through
 * untouched, when every candidate streams exactly that (its rate, and its bitrate where the API
 * names one); otherwise their PCM, which the surface encodes at the asked rate and bitrate (an
 * MP3 at another rate would break the promise).
 */
function mp3Candidates(route: (format: "pcm" | "mp3") => Candidate[], asked: Mp3Format, requireMp3Provider = false): { format: "pcm" | "mp3"; candidates: Candidate[] } {
  let native: Candidate[] | undefined;
  try {
    native = route("mp3");
  } catch (err) {
    if (requireMp3Provider || !(err instanceof ApiError && err.code === "invalid_output_format")) throw err;
  }
  if (native?.every(({ provider: { ttsMp3: own } }) => own?.sampleRate === asked.sampleRate && (asked.kbps === undefined || own.kbps === asked.kbps))) {
    return { format: "mp3", candidates: native };
  }
  return { format: "pcm", candidates: route("pcm") };
}

/**
 * The speed the providers are given, as a number, and the provider options without it. The
 * request's own `speed` (the portable one, OpenAI's, checked by `withSpeed`) wins; else a provider
 * option `speed` that reads as a number (`/v1/tts`'s `speed`, `/el`'s `voice_settings.speed`, a
 * profile's `provider_options.speed`) is that provider option's value, passed to the providers as
 * the docs say, without narrowing the candidates; one that is no number stays the provider's own
 * option, for its adapter to take or refuse.
 */
export function speedOfOptions(options: Record<string, string>, portable?: number): { speed?: number; options: Record<string, string> } {
  const { speed: option, ...rest } = options;
  if (portable !== undefined) return { speed: portable, options: rest };
  if (option === undefined || option.trim() === "" || !Number.isFinite(Number(option))) return { options };
  return { speed: Number(option), options: rest };
}

/**
 * A speed other than 1.0 only goes to providers that honour it (fallback stays among them): those
 * that take any speed, and those whose range holds it; when none of a model's candidates can, a
 * refusal of `speed` (naming the fallback, for a fallback model's) rather than audio at the wrong pace.
 */
function withSpeed(candidates: Candidate[], speed: number | undefined): Candidate[] {
  if (speed === undefined || speed === 1) return candidates;
  return byLink(candidates).flatMap((link) =>
    inLink(link[0].fallback, () => {
      const able = link.filter(({ provider: { ttsSpeed: range } }) => range === true || (range && speed >= range.min && speed <= range.max));
      if (able.length === 0) throw refusal("invalid_request", "speed", ` ${speed} cannot be honoured by ${link.map((b) => b.provider.id).join(", ")}: omit it or use 1.0`);
      return able;
    }),
  );
}
