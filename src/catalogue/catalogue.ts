import type { Binding, Capability, ModelSpec, ProviderSpec } from "./types.ts";

export interface CatalogueData {
  providers: ProviderSpec[];
  models: ModelSpec[];
}

/**
 * The served catalogue: the usable providers and the models they bind, indexed once at start so
 * that per-request look-ups do no I/O and no scanning of the data.
 */
export class Catalogue {
  readonly providers: ProviderSpec[];
  readonly models: ModelSpec[];
  readonly bindings: Binding[];
  private readonly byName = new Map<string, Binding[]>();

  constructor(data: CatalogueData) {
    const models = new Map(data.models.map((m) => [m.canonical, m]));
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
    this.models = data.models.filter((m) => served.has(m.canonical));
    for (const b of this.bindings) {
      // A model is named by its canonical slug, an alias, a provider's bare id, or `{provider}/{id}`.
      const names = new Set([b.canonical, ...b.model.aliases, b.id, `${b.provider.id}/${b.id}`]);
      for (const name of names) this.index(name, b);
    }
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
