import type { Principal } from "../accounts/keys.ts";
import type { AppContext } from "../context.ts";
import type { ApiError } from "../errors.ts";
import { STREAMED_ANSWER } from "../limits/counters.ts";
import { planVoice } from "../planning/plan-voice.ts";
import type { Candidate } from "../routing/candidate.ts";
import { TtsSession } from "../sessions/tts-session.ts";
import type { Lexicon } from "../pronunciation/lexicon.ts";
import type { Locator } from "../pronunciation/locators.ts";
import { HttpTtsPort, type HttpAudioShape } from "./http-tts-port.ts";
import { ttsSessionDeps } from "./tts-session-deps.ts";
import { recordId } from "../util/record-id.ts";

export interface HttpTtsRequest {
  /** Routed candidates (each with its voice), not yet checked against the balance. */
  candidates: Candidate[];
  text: string;
  /** The primary model's voice. */
  voice?: string;
  format: "pcm" | "mp3";
  /** The planned speed. */
  speed?: number;
  options: Record<string, string>;
  /** Ask providers for character timings (the session's `alignment` events go to the shape). */
  alignment?: boolean;
  /** `false`: the request opted out of the TTS cache. */
  cache?: boolean;
  /** The request's signal: the client going away before the first byte ends the session. */
  signal: AbortSignal;
  /** The pronunciation dictionaries the request names. */
  pronunciation?: Locator[];
}

/**
 * One text to speech as an HTTP response, for the compatibility surfaces: a voice no candidate
 * takes is 400, then admitted by the meter (402/422 before anything starts), then the same TTS session as `/v1/tts` (routing, fallback
 * while no audio went out, metering) with the audio streamed back as produced. The answer counts
 * against its tenant's and key's `max_sessions` while it streams (429 `concurrency_limited` first).
 */
export async function speakOverHttp(ctx: AppContext, principal: Principal, req: HttpTtsRequest, shape: HttpAudioShape, errorResponse: (err: ApiError) => Response, surface: string): Promise<Response> {
  const lease = await ctx.limits.admit(principal, STREAMED_ANSWER);
  let candidates: Candidate[];
  let lexicon: Lexicon;
  try {
    lexicon = await ctx.pronunciation.lexicon(principal.tenantId, req.pronunciation ?? []);
    const planned = (await planVoice(req, principal.tenantId, ctx)).candidates;
    // A phoneme rule the first provider cannot say is the request's mistake: 400 before anything starts.
    const first = planned[0]?.provider.id;
    if (first) lexicon.check(first, ctx.providers.get(first)?.phonemes);
    candidates = await ctx.meter.admit(principal, planned);
  } catch (err) {
    lease?.release();
    throw err;
  }
  const id = recordId("tts");
  const port = new HttpTtsPort(shape, errorResponse);
  const session = new TtsSession(
    {
      id,
      voice: req.voice,
      format: req.format,
      ...(shape.pcm ? { sampleRate: shape.pcm.rate } : {}),
      autoFlush: true,
      speed: req.speed,
      options: req.options,
      alignment: req.alignment,
      cache: req.cache,
      admit: async () => {
        const meter = ctx.meter.start(id, principal, surface);
        meter.prefetch(candidates[0]);
        return { candidates, meter, lexicon };
      },
    },
    ttsSessionDeps(ctx, port, surface, "http"),
  );
  // A client that stops reading, or goes away before the first byte, ends the session.
  port.onCancel(() => session.abort());
  req.signal.addEventListener(
    "abort",
    () => {
      port.abandon();
      session.abort();
    },
    { once: true },
  );
  ctx.sessions.add(session, "tts");
  if (lease) void session.finished.finally(lease.release);
  session.command({ type: "text", text: req.text });
  session.command({ type: "close" });
  return port.response;
}
