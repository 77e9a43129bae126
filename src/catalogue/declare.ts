import type { BindingSpec, ModelSpec, PriceSpec, ProviderSpec, TtsFormat } from "./types.ts";

// A provider's own models declared once each: the model (`<provider>/<id>`, its name and aliases)
// and the binding that serves it come from one entry, in the order given (TTS, then STT).

interface Offer {
  /** The provider's model id; the model's canonical slug is `<provider>/<id>`. */
  id: string;
  name: string;
  aliases?: string[];
  /** Absent: unpriced (requests for it answer 422 `model_not_priced`). */
  price?: PriceSpec;
}

interface TtsOffer extends Offer {
  formats: readonly TtsFormat[];
  /** Whether the model is offered on the provider's streaming socket (default true). */
  streaming?: boolean;
  instructions?: BindingSpec["instructions"];
}

interface SttOffer extends Offer {
  streaming: boolean;
  synchronous: boolean;
  batch: boolean;
  inputFormats?: string[];
}

export interface Declaration extends Omit<ProviderSpec, "id" | "kind" | "bindings"> {
  tts?: TtsOffer[];
  stt?: SttOffer[];
}

/** A cloud provider's catalogue entry and the models it brings. */
export interface DeclaredCatalogue<Id extends string> {
  id: Id;
  spec: ProviderSpec;
  models: ModelSpec[];
}

export function declareCloud<Id extends string>(id: Id, d: Declaration): DeclaredCatalogue<Id> {
  const { name, requiresVoice, cloneFee, ttsSpeed, ttsMp3, defaults, tts = [], stt = [] } = d;
  const model = (o: Offer, capability: "tts" | "stt"): ModelSpec => ({ canonical: `${id}/${o.id}`, name: o.name, capability, aliases: o.aliases ?? [] });
  const ttsBinding = ({ id: modelId, formats, streaming = true, instructions, price }: TtsOffer): BindingSpec => ({
    capability: "tts",
    id: modelId,
    canonical: `${id}/${modelId}`,
    streaming,
    synchronous: true,
    formats: [...formats],
    ...(instructions ? { instructions } : {}),
    ...(price ? { price } : {}),
  });
  const sttBinding = ({ id: modelId, streaming, synchronous, batch, inputFormats, price }: SttOffer): BindingSpec => ({
    capability: "stt",
    id: modelId,
    canonical: `${id}/${modelId}`,
    streaming,
    synchronous,
    batch,
    ...(inputFormats ? { inputFormats } : {}),
    ...(price ? { price } : {}),
  });
  return {
    id,
    spec: {
      id,
      name,
      kind: "cloud",
      requiresVoice,
      ...(cloneFee ? { cloneFee } : {}),
      ...(ttsSpeed ? { ttsSpeed } : {}),
      ...(ttsMp3 ? { ttsMp3 } : {}),
      defaults,
      bindings: [...tts.map(ttsBinding), ...stt.map(sttBinding)],
    },
    models: [...tts.map((o) => model(o, "tts")), ...stt.map((o) => model(o, "stt"))],
  };
}
