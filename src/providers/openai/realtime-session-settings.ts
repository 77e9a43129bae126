import { ProviderError } from "../../errors.ts";
import type { SttStreamRequest } from "../stt-types.ts";

// The opening `session.update` of an OpenAI realtime transcription session: the portable settings
// translated to OpenAI's, its own `provider_options` checked and winning.

const NUMERIC_OPTIONS = ["silence_duration_ms", "threshold", "prefix_padding_ms"] as const;
const CHOICES = { eagerness: ["low", "medium", "high", "auto"], noise_reduction: ["near_field", "far_field", "none"] } as const;
const NATIVE_OPTIONS = [...NUMERIC_OPTIONS, ...Object.keys(CHOICES), "prompt", "language"];

const refuse = (why: string) => new ProviderError(`openai: ${why}`, false);

function nativeNumber(options: Record<string, string>, name: string): number | undefined {
  if (options[name] === undefined) return undefined;
  const n = Number(options[name]);
  if (options[name].trim() === "" || !Number.isFinite(n) || n < 0) throw refuse(`provider_options[${name}] must be a number >= 0`);
  return n;
}

function nativeChoice(options: Record<string, string>, name: keyof typeof CHOICES): string | undefined {
  const v = options[name];
  if (v !== undefined && !(CHOICES[name] as readonly string[]).includes(v)) throw refuse(`provider_options[${name}] must be one of ${CHOICES[name].join(", ")}`);
  return v;
}

function turnDetection(req: SttStreamRequest): Record<string, unknown> | null {
  if (req.commitStrategy === "manual") return null;
  if (req.turnDetection === "semantic") return { type: "semantic_vad", eagerness: nativeChoice(req.options, "eagerness") ?? "auto" };
  const vad: Record<string, unknown> = { type: "server_vad" };
  const portable = { silence_duration_ms: req.portable?.silence_duration_ms, threshold: req.portable?.speech_threshold, prefix_padding_ms: undefined };
  for (const name of NUMERIC_OPTIONS) {
    const value = nativeNumber(req.options, name) ?? portable[name];
    if (value !== undefined) vad[name] = value;
  }
  return vad;
}

/** The `session` of the opening `session.update`: portable settings translated, provider_options winning. */
export function transcriptionSession(req: SttStreamRequest): Record<string, unknown> {
  for (const name of Object.keys(req.options)) {
    if (!NATIVE_OPTIONS.includes(name)) throw refuse(`provider_options[${name}] is not a transcription session setting (${NATIVE_OPTIONS.join(", ")})`);
  }
  if (req.channels !== 1) throw refuse("realtime transcription takes mono audio only");
  const portable = req.portable ?? {};
  const transcription: Record<string, unknown> = { model: req.model };
  const language = req.options.language ?? req.language?.split("-")[0].toLowerCase(); // OpenAI wants ISO-639-1
  if (language) transcription.language = language;
  // gpt-4o transcribers take a free-text prompt: the context, then the key terms.
  const prompt = req.options.prompt ?? [portable.context, portable.keyterms?.join(", ")].filter(Boolean).join("\n");
  if (prompt) transcription.prompt = prompt;
  const input: Record<string, unknown> = {
    format: req.audioFormat === "ulaw_8000" ? { type: "audio/pcmu" } : { type: "audio/pcm", rate: 24000 },
    transcription,
    turn_detection: turnDetection(req),
  };
  const noise = nativeChoice(req.options, "noise_reduction");
  if (noise) input.noise_reduction = noise === "none" ? null : { type: noise };
  return { type: "transcription", audio: { input } };
}
