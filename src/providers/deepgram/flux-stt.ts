import { CLOSE, ProviderError } from "../../errors.ts";
import type { SttEvent, SttFamily, SttStream, SttStreamRequest } from "../stt-types.ts";
import { TurnEnds, turnEndingStream } from "../turn-ends.ts";
import { SilenceKeepAlive } from "../silence-keep-alive.ts";
import { type HttpProviderOptions, keepAliveEvery } from "../upstream-http.ts";
import { JsonSocketStream } from "../upstream-ws.ts";

/**
 * Flux (v2/listen): Deepgram's own semantic turn detector decides whole turns (StartOfTurn …
 * EndOfTurn, with an optional eager guess); ForceEndTurn is the commit frame. Interim transcripts
 * are off unless asked for, as for the semantic-only family of the interface.
 */
export const FLUX_FAMILY: SttFamily = {
  name: "deepgram-flux",
  portableOptions: ["language", "interim_results", "keyterms", "turn_threshold", "eager_end_threshold", "turn_timeout_ms"],
  turnDetector: "semantic",
  turnStyles: ["semantic"],
  commitFrame: true,
  interimDefault: false,
  // No 22.05 kHz: Flux takes raw audio at these rates only.
  inputFormats: ["pcm_8000", "pcm_16000", "pcm_24000", "pcm_44100", "pcm_48000", "ulaw_8000"],
  audioOptions: { encoding: "encoding", sampleRate: "sample_rate" },
  passthrough: true,
  // Deepgram's ranges for eot_threshold, eager_eot_threshold and eot_timeout_ms.
  optionRanges: { turn_threshold: [0.5, 1], eager_end_threshold: [0.3, 0.9], turn_timeout_ms: [500, 60000] },
};

const ENGLISH = /^en(-|$)/i;

/** The upstream query: portable settings translated, provider_options winning. */
export function fluxQuery(req: SttStreamRequest): URLSearchParams {
  if (req.channels !== 1) throw new ProviderError("deepgram flux takes mono audio only", false);
  const q = new URLSearchParams({ model: req.model, encoding: req.audioFormat.startsWith("ulaw") ? "mulaw" : "linear16", sample_rate: req.audioFormat.split("_")[1] });
  const o = req.portable ?? {};
  if (o.turn_threshold !== undefined) q.set("eot_threshold", String(o.turn_threshold));
  if (o.eager_end_threshold !== undefined) q.set("eager_eot_threshold", String(o.eager_end_threshold));
  if (o.turn_timeout_ms !== undefined) q.set("eot_timeout_ms", String(o.turn_timeout_ms));
  for (const term of o.keyterms ?? []) q.append("keyterm", term);
  if (req.language && req.model === "flux-general-en") {
    // The English model takes no language hint: English is what it hears, anything else is refused.
    if (!ENGLISH.test(req.language)) throw new ProviderError(`deepgram flux-general-en recognizes English only, not ${req.language} (flux-general-multi takes language hints)`, false);
  } else if (req.language) q.append("language_hint", req.language);
  for (const [k, v] of Object.entries(req.options)) q.set(k, v);
  return q;
}

interface TurnInfo {
  event: string;
  transcript?: string;
  audio_window_start: number;
  audio_window_end: number;
  trigger?: string;
}

/** Flux's TurnInfo events mapped onto ours; turns are committed by Deepgram (auto) or by ForceEndTurn. */
export function fluxStream(ws: WebSocket, req: SttStreamRequest, options: HttpProviderOptions): SttStream {
  const auto = req.commitStrategy === "auto";
  const bytesPerSecond = Number(req.audioFormat.split("_")[1]) * (req.audioFormat.startsWith("ulaw") ? 1 : 2);
  let sentBytes = 0;
  let inTurn = false; // between StartOfTurn and EndOfTurn
  let ending = false;
  const sentMs = () => Math.round((sentBytes / bytesPerSecond) * 1000);
  // Flux has no keep-alive message (v1's KeepAlive is not in its protocol); its audio windows count the silence.
  const quiet = new SilenceKeepAlive(
    req.audioFormat,
    sentMs,
    () => !ending,
    (silence) => silence,
  );
  const ms = (seconds: number) => quiet.clientTime(Math.round(seconds * 1000));
  const signal = (s: JsonSocketStream<SttEvent>, name: "started" | "end" | "eager_end" | "resumed", atMs: number) => s.push({ type: "signal", origin: "provider", signal: name, scope: "turn", atMs });
  const endOfTurn = (ev: TurnInfo, s: JsonSocketStream<SttEvent>) => {
    inTurn = false;
    const answering = ends.answering(ending);
    const endMs = ms(ev.audio_window_end);
    if (answering === "clear") s.push({ type: "cleared", atMs: endMs });
    else {
      if (ev.transcript) s.push({ type: "transcript", final: true, text: ev.transcript, startMs: ms(ev.audio_window_start), endMs });
      signal(s, "end", endMs);
      if (answering || ev.trigger === "manual") s.push({ type: "committed", origin: "client", atMs: endMs });
      else if (auto) s.push({ type: "committed", origin: "provider", atMs: endMs });
    }
    ends.answerRest(endMs);
  };

  const stream = new JsonSocketStream<SttEvent>("deepgram", ws, options.idleTimeoutMs, {
    keepAlive: quiet.every(keepAliveEvery(options)),
    normalClose: (code) => code === CLOSE.normal && ending,
    onJson(ev, s) {
      if (ev.type === "Error") return s.fail(`deepgram flux failed: ${ev.code ?? "error"} ${ev.description ?? ""}`.trim());
      if (ev.type !== "TurnInfo") return; // Connected, ConfigureSuccess, and types to come
      const turn = ev as TurnInfo;
      const interim = () => {
        if (turn.transcript) s.push({ type: "transcript", final: false, text: turn.transcript, startMs: ms(turn.audio_window_start), endMs: ms(turn.audio_window_end) });
      };
      switch (turn.event) {
        case "StartOfTurn":
          inTurn = true;
          return signal(s, "started", ms(turn.audio_window_start));
        case "Update":
          if (req.interim && !ends.clearing) interim();
          return;
        case "EagerEndOfTurn":
          if (ends.clearing) return;
          signal(s, "eager_end", ms(turn.audio_window_end));
          return interim(); // the transcript the eager guess is about, even without interim_results
        case "TurnResumed":
          if (!ends.clearing) signal(s, "resumed", ms(turn.audio_window_end));
          return;
        case "EndOfTurn":
          return endOfTurn(turn, s);
      }
    },
  });

  const ends = new TurnEnds(stream, '{"type":"ForceEndTurn"}');
  return turnEndingStream(stream, ends, {
    endFrame: '{"type":"CloseStream"}',
    turnOpen: () => inTurn,
    audioMs: sentMs,
    send: (audio) => {
      sentBytes += audio.byteLength;
      stream.send(audio);
    },
    ending: () => (ending = true),
  });
}
