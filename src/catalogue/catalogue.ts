import { NO_ALIASES, type OperatorAliases } from "./operator-aliases.ts";
import type { Binding, Capability, ModelSpec, ProviderSpec } from "./types.ts";

export interface CatalogueData {
  providers: ProviderSpec[];
  models: ModelSpec[];
}

/** An operator's model alias as served: the name, what it stands for, the bindings it reaches. */
export interface ServedModelAlias {
  alias: string;
  aliasOf: string;
  bindings: Binding[];
}

/** An operator's voice alias as served: on the canonical model `model`, `alias` is spoken as `voice`. */
export interface ServedVoiceAlias {
  model: string;
  alias: string;
  voice: string;
}

/**
 * The served catalogue: the usable providers and the models they bind, indexed once at start so
 * that per-request look-ups do no I/O and no scanning of the data. The operator's aliases
 * (`operator-aliases.ts`) are names too, checked here: each must reach a served model and none
 * may take a name the catalogue already serves.
 */
export class Catalogue {
  readonly providers: ProviderSpec[];
  readonly models: ModelSpec[];
  readonly bindings: Binding[];
  readonly modelAliases: ServedModelAlias[];
  readonly voiceAliases: ServedVoiceAlias[];
  private readonly byName = new Map<string, Binding[]>();

  constructor(data: CatalogueData, aliases: OperatorAliases = NO_ALIASES) {
    // The catalogue's own copies: the operator's voice aliases are set on them below.
    const models = new Map(data.models.map((m) => [m.canonical, { ...m }]));
    this.providers = data.providers;
    this.bindings = data.providers.flatMap((provider) =>
      provider.bindings.map((spec) => {
        const model = models.get(spec.canonical);
        if (!model) throw new Error(`catalogue: ${provider.id}/${spec.id} names unknown model ${spec.canonical}`);
        if (model.capability !== spec.capability) {
          throw new Error(`catalogue: ${provider.id}/${spec.id} is ${spec.capability} but ${model.canonical} is ${model.capability}`);
        }
        return { ...spec, provider, model };
      }),
    );
    const served = new Set(this.bindings.map((b) => b.canonical));
    this.models = [...models.values()].filter((m) => served.has(m.canonical));
    for (const b of this.bindings) {
      // A model is named by its canonical slug, an alias, a provider's bare id, or `{provider}/{id}`.
      const names = new Set([b.canonical, ...b.model.aliases, b.id, `${b.provider.id}/${b.id}`]);
      for (const name of names) this.index(name, b);
    }
    this.modelAliases = aliases.models.map((a) => {
      const where = `config: ${a.source}: ${a.alias}=${a.target}:`;
      if (this.byName.has(a.alias))
        throw new Error(`${where} ${a.alias} is already the name of a served model (${this.namedModels(a.alias)}); an alias may not hide it: choose another alias or remove it`);
      const bindings = this.byName.get(a.target);
      if (!bindings) {
        const another = aliases.models.some((x) => x.alias === a.target);
        throw new Error(`${where} ${a.target} is ${another ? "another alias; an alias names a served model itself" : "not a served model (GET /v1/models lists them)"}`);
      }
      return { alias: a.alias, aliasOf: a.target, bindings };
    });
    for (const a of this.modelAliases) for (const b of a.bindings) this.index(a.alias, b);
    this.voiceAliases = this.serveVoiceAliases(aliases);
  }

  /** Sets each voice alias on the models its model name reaches; the same alias of one model must say one voice. */
  private serveVoiceAliases(aliases: OperatorAliases): ServedVoiceAlias[] {
    const byModel = new Map<ModelSpec, Map<string, string>>();
    for (const v of aliases.voices) {
      const reached = [...new Set((this.byName.get(v.model) ?? []).map((b) => b.model))];
      if (reached.length === 0) throw new Error(`config: ${v.source}: ${v.model}:${v.alias}=${v.voice}: ${v.model} is not a served model (GET /v1/models lists them)`);
      for (const model of reached) {
        const own = byModel.get(model) ?? new Map<string, string>();
        const seen = own.get(v.alias);
        if (seen !== undefined && seen !== v.voice) throw new Error(`config: ${v.source}: voice alias ${v.alias} of ${model.canonical} stands for both ${seen} and ${v.voice}: keep one`);
        byModel.set(model, own.set(v.alias, v.voice));
      }
    }
    for (const [model, own] of byModel) model.voiceAliases = own;
    return [...byModel].flatMap(([model, own]) => [...own].map(([alias, voice]) => ({ model: model.canonical, alias, voice })));
  }

  private namedModels(name: string): string {
    return [...new Set((this.byName.get(name) ?? []).map((b) => b.canonical))].join(", ");
  }

  private index(name: string, binding: Binding): void {
    const list = this.byName.get(name);
    if (!list) this.byName.set(name, [binding]);
    else if (!list.includes(binding)) list.push(binding);
  }

  provider(id: string): ProviderSpec | undefined {
    return this.providers.find((p) => p.id === id);
  }

  /** Every binding the name may refer to, for one capability, in catalogue order. */
  lookup(name: string, capability: Capability): Binding[] {
    return (this.byName.get(name) ?? []).filter((b) => b.capability === capability);
  }

  /** True when the name is known for some capability (tells "unknown model" from "wrong capability"). */
  knows(name: string): boolean {
    return this.byName.has(name);
  }
}
