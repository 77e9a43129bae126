// The operator's own names for served models and their voices (docs/catalogue.md#operator-aliases):
// `MODEL_ALIASES` (`alias=model,…`), `VOICE_ALIASES` (`model:alias=voice,…`) and `ALIASES_FILE`
// (JSON). Read here, checked against the served catalogue by `Catalogue`; none applies unless set.

/** `alias` stands for the served model `target`; `source` is the setting that says so (for errors). */
export interface ModelAlias {
  alias: string;
  target: string;
  source: string;
}

/** On `model` (a served model's name), the voice `alias` stands for `voice`. */
export interface VoiceAlias {
  model: string;
  alias: string;
  voice: string;
  source: string;
}

export interface OperatorAliases {
  models: ModelAlias[];
  voices: VoiceAlias[];
}

export const NO_ALIASES: OperatorAliases = { models: [], voices: [] };

const NAME = /^[^\s,=]+$/;

function bad(source: string, entry: string, why: string): Error {
  return new Error(`config: ${source}: "${entry}" ${why}`);
}

function name(source: string, entry: string, value: string, what: string): string {
  if (!NAME.test(value)) throw bad(source, entry, `needs ${what}: a name without spaces, commas or "="`);
  return value;
}

/** `MODEL_ALIASES`' text: `alias=model` entries separated by commas. */
export function modelAliasesOfText(text: string | undefined, source = "MODEL_ALIASES"): ModelAlias[] {
  return entries(text).map((entry) => {
    const at = entry.indexOf("=");
    if (at < 0) throw bad(source, entry, "is not alias=model");
    return { alias: name(source, entry, entry.slice(0, at).trim(), "an alias before ="), target: name(source, entry, entry.slice(at + 1).trim(), "a model after ="), source };
  });
}

/** `VOICE_ALIASES`' text: `model:alias=voice` entries separated by commas (the model's name may hold ":"; the alias may not). */
export function voiceAliasesOfText(text: string | undefined, source = "VOICE_ALIASES"): VoiceAlias[] {
  return entries(text).map((entry) => {
    const at = entry.indexOf("=");
    const colon = entry.lastIndexOf(":", at);
    if (at < 0 || colon < 0) throw bad(source, entry, "is not model:alias=voice");
    return {
      model: name(source, entry, entry.slice(0, colon).trim(), "a model before :"),
      alias: name(source, entry, entry.slice(colon + 1, at).trim(), "an alias between : and ="),
      voice: name(source, entry, entry.slice(at + 1).trim(), "a voice after ="),
      source,
    };
  });
}

function entries(text: string | undefined): string[] {
  return (text ?? "")
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean);
}

/** `ALIASES_FILE`'s content: `{"models": {"alias": "model"}, "voices": {"model": {"alias": "voice"}}}`. */
export function aliasesOfJson(value: unknown, source: string): OperatorAliases {
  const object = (v: unknown, at: string): Record<string, unknown> => {
    if (!v || typeof v !== "object" || Array.isArray(v)) throw new Error(`config: ${source}: ${at} must be a JSON object`);
    return v as Record<string, unknown>;
  };
  const text = (v: unknown, at: string): string => {
    if (typeof v !== "string") throw new Error(`config: ${source}: ${at} must be a string`);
    return v;
  };
  const { models = {}, voices = {}, ...rest } = object(value, "the file");
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) throw new Error(`config: ${source}: "${unknown}" is not a known member (models, voices)`);
  return {
    models: Object.entries(object(models, "models")).flatMap(([alias, target]) => modelAliasesOfText(`${alias}=${text(target, `models.${alias}`)}`, source)),
    voices: Object.entries(object(voices, "voices")).flatMap(([model, byAlias]) =>
      Object.entries(object(byAlias, `voices.${model}`)).flatMap(([alias, voice]) => voiceAliasesOfText(`${model}:${alias}=${text(voice, `voices.${model}.${alias}`)}`, source)),
    ),
  };
}

/** Every source's aliases together; one alias said twice must say the same each time. */
export function mergeAliases(...all: OperatorAliases[]): OperatorAliases {
  const models = new Map<string, ModelAlias>();
  const voices = new Map<string, VoiceAlias>();
  for (const a of all.flatMap((x) => x.models)) {
    const seen = models.get(a.alias);
    if (seen && seen.target !== a.target) throw new Error(`config: model alias ${a.alias} stands for ${seen.target} (${seen.source}) and for ${a.target} (${a.source}): keep one`);
    models.set(a.alias, a);
  }
  for (const v of all.flatMap((x) => x.voices)) {
    const key = `${v.model}\u0000${v.alias}`;
    const seen = voices.get(key);
    if (seen && seen.voice !== v.voice) throw new Error(`config: voice alias ${v.model}:${v.alias} stands for ${seen.voice} (${seen.source}) and for ${v.voice} (${v.source}): keep one`);
    voices.set(key, v);
  }
  return { models: [...models.values()], voices: [...voices.values()] };
}
