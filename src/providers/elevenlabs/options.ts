import { ProviderError } from "../../errors.ts";

// Provider options both ElevenLabs TTS transports read, validated before anything is sent upstream.

const VOICE_SETTINGS = ["stability", "similarity_boost", "style", "speed"] as const;

/** `voice_settings` from the planned speed, the numeric provider options and `use_speaker_boost`; undefined when none is given. */
export function voiceSettings(speed: number | undefined, options: Record<string, string>): Record<string, number | boolean> | undefined {
  const settings: Record<string, number | boolean> = {};
  for (const key of VOICE_SETTINGS) {
    const value = options[key];
    if (value === undefined) continue;
    if (!Number.isFinite(Number(value))) throw new ProviderError(`elevenlabs option ${key} must be a number, not ${JSON.stringify(value)}`, false);
    settings[key] = Number(value);
  }
  if (speed !== undefined) settings.speed = speed;
  const boost = booleanOption(options, "use_speaker_boost");
  if (boost !== undefined) settings.use_speaker_boost = boost;
  return Object.keys(settings).length ? settings : undefined;
}

/** `chunk_length_schedule=120,160,250` as the list of character counts ElevenLabs takes (each 50–500). */
export function chunkLengthSchedule(value: string | undefined): number[] | undefined {
  if (value === undefined) return undefined;
  const schedule = value.split(",").map((item) => Number(item.trim()));
  if (!schedule.length || schedule.some((n) => !Number.isInteger(n) || n < 50 || n > 500)) {
    throw new ProviderError(`elevenlabs option chunk_length_schedule must be comma-separated integers from 50 to 500, not ${JSON.stringify(value)}`, false);
  }
  return schedule;
}

/** A `true`/`false` provider option; undefined when absent. */
export function booleanOption(options: Record<string, string>, name: string): boolean | undefined {
  const value = options[name];
  if (value === undefined) return undefined;
  if (value !== "true" && value !== "false") throw new ProviderError(`elevenlabs option ${name} must be true or false, not ${JSON.stringify(value)}`, false);
  return value === "true";
}
