import type { Catalogue } from "./catalogue.ts";
import { pricingView } from "./pricing.ts";
import type { Binding, Capability, ProviderSpec } from "./types.ts";

/** What a binding can do and costs, as both catalogue views show it. */
function bindingFields(b: Binding) {
  return {
    streaming: b.streaming,
    synchronous: b.synchronous,
    ...(b.capability === "stt" ? { batch: b.batch ?? false } : {}),
    ...(b.formats ? { formats: b.formats } : {}),
    ...(b.inputFormats ? { input_formats: b.inputFormats } : {}),
    ...(b.instructions ? { instructions: b.instructions } : {}),
    ...(b.price ? { pricing: pricingView(b.capability, b.price) } : {}),
  };
}

function modelEntry(b: Binding, health: (b: Binding) => unknown) {
  return { id: b.id, canonical: b.canonical, aliases: b.model.aliases, ...bindingFields(b), health: health(b) };
}

function defaultsEntry(p: ProviderSpec) {
  const { tts, stt } = p.defaults;
  return {
    ...(tts ? { tts: { model: tts.model, ...(tts.voice ? { voice: tts.voice } : {}) } } : {}),
    ...(stt ? { stt: { model: stt.model, ...(stt.synchronousModel && stt.synchronousModel !== stt.model ? { synchronousModel: stt.synchronousModel } : {}) } } : {}),
  };
}

/** Every provider with its bindings, each with its `health` as the router sees it now. */
export function providersView(catalogue: Catalogue, health: (b: Binding) => unknown) {
  const providers: Record<string, unknown> = {};
  for (const p of catalogue.providers) {
    const own = catalogue.bindings.filter((b) => b.provider === p);
    providers[p.id] = {
      name: p.name,
      kind: p.kind,
      requires_voice: p.requiresVoice,
      defaults: defaultsEntry(p),
      tts: own.filter((b) => b.capability === "tts").map((b) => modelEntry(b, health)),
      stt: own.filter((b) => b.capability === "stt").map((b) => modelEntry(b, health)),
    };
  }
  return { providers };
}

export function modelsView(catalogue: Catalogue) {
  const group = (capability: Capability) =>
    catalogue.models
      .filter((m) => m.capability === capability)
      .map((m) => ({
        id: m.canonical,
        canonical: m.canonical,
        name: m.name,
        aliases: m.aliases,
        providers: catalogue.bindings
          .filter((b) => b.model === m)
          .map((b) => ({
            id: b.provider.id,
            name: b.provider.name,
            provider_model_id: b.id,
            requires_voice: b.provider.requiresVoice,
            ...bindingFields(b),
          })),
      }));
  return { tts: group("tts"), stt: group("stt"), ...aliasesView(catalogue) };
}

/** The operator's aliases (docs/catalogue.md#operator-aliases): each model alias once per capability it reaches. */
function aliasesView(catalogue: Catalogue) {
  return {
    model_aliases: catalogue.modelAliases.flatMap((a) =>
      (["tts", "stt"] as const)
        .map((capability) => ({ capability, models: [...new Set(a.bindings.filter((b) => b.capability === capability).map((b) => b.canonical))] }))
        .filter((x) => x.models.length > 0)
        .map(({ capability, models }) => ({ id: a.alias, alias_of: a.aliasOf, capability, models })),
    ),
    voice_aliases: catalogue.voiceAliases.map((v) => ({ model: v.model, id: v.alias, alias_of: v.voice })),
  };
}
