import type { Catalogue } from "../catalogue/catalogue.ts";
import type { Binding } from "../catalogue/types.ts";
import { ApiError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { TtsProvider, Voice } from "../providers/types.ts";
import { withTimeout } from "../util/timeout.ts";
import type { VoiceEntry } from "./voice-entry.ts";
import { entriesOfLists } from "./voice-catalogue-entries.ts";
import type { CloneCounter, VoiceMetrics } from "./voice-metrics.ts";
import type { VoicePreviews } from "./voice-previews.ts";
import { contentVersionOf } from "./voice-index-parts.ts";
import { VoiceIndex } from "./voice-index.ts";
import type { VoicePage, VoiceQuery } from "./voice-query.ts";
import { searchVoices } from "./voice-search.ts";
import type { Sighting, VoiceSightings } from "./voice-sightings.ts";

// The voice catalogue: every served TTS provider's voices, one entry per model and voice, built in
// the background and searched in memory. Each provider's list is asked for at start and every
// `refreshMs`; a provider that fails keeps its last list (and is asked again after `retryMs`). A
// request never waits on a provider: it searches the index built last.

/** How long the first requests wait for an embedded engine's list once another list is in. */
const LOCAL_LIST_GRACE_MS = 2000;

export interface VoiceCatalogueOptions {
  /** How often every provider's list is asked for again. */
  refreshMs: number;
  /** How soon a provider whose list could not be had is asked again (at most `refreshMs`). */
  retryMs: number;
  /** Longest a provider may take to give its list. */
  listTimeoutMs: number;
}

export interface VoiceCatalogueDeps {
  catalogue: Catalogue;
  providers: ReadonlyMap<string, TtsProvider>;
  metrics: VoiceMetrics;
  sightings: VoiceSightings;
  previews: VoicePreviews;
  log: Logger;
}

/** A tenant's own voices (cloned voices: `scope.type` `organization`), searched with the catalogue for its key. */
export type OwnVoices = (tenantId: string) => Promise<readonly VoiceEntry[]>;

interface Built {
  index: VoiceIndex;
  /** When the catalogue's content last changed (not its metrics or last sightings). */
  updatedAt: Date;
  byVoice: Map<string, VoiceEntry[]>;
}

export class VoiceCatalogue {
  /** Each provider's last list that could be had. */
  private readonly lists = new Map<string, Voice[]>();
  private built: Built | undefined;
  private ownVoices: OwnVoices | undefined;
  private hidden: (voiceId: string) => boolean = () => false;
  private timer: Timer | undefined;
  private refreshing: Promise<void> | undefined;
  /** The sightings of a refresh being written (what `stop` waits for before the database closes). */
  private writing: Promise<void> | undefined;
  private firstBuild: Promise<void> | undefined;
  /** Settled by the first publish. */
  private readonly firstList: Promise<void>;
  /** Settled once every embedded engine (`kind: local`) has answered the first build. */
  private readonly localLists: Promise<void>;
  private localsListed: () => void = () => {};
  private listed: () => void = () => {};
  private stopped = false;
  /** The first requests' wait is over (see `ready`). */
  private localListsIn = false;
  /** The last publication: the next one follows it. */
  private publishing: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: VoiceCatalogueDeps,
    private readonly options: VoiceCatalogueOptions,
  ) {
    this.firstList = new Promise((resolve) => (this.listed = resolve));
    this.localLists = new Promise((resolve) => (this.localsListed = resolve));
    // New figures re-sort `popular` without listing anything again.
    deps.metrics.onChange(() => {
      if (this.built) void this.publish(new Date());
    });
  }

  /** Builds the catalogue now (in the background), then keeps it fresh; the metrics likewise. */
  start(): void {
    this.deps.metrics.start();
    this.firstBuild = this.refresh();
  }

  /** Stops refreshing. A listing under way is not waited for (a provider may stall); its result is dropped, nothing is written after this. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await Promise.all([this.writing, this.deps.metrics.stop()]);
  }

  /** Resolves once the first requests may be answered: see within; at once after that. */
  async ready(): Promise<void> {
    // The first answer waits for the embedded engines' lists (theirs come in a moment: their data
    // is local), a stalled one no longer than LOCAL_LIST_GRACE_MS after the first list; never for a cloud provider's.
    if (!this.localListsIn) await Promise.race([this.firstBuild, Promise.all([this.localLists, this.firstList]), this.firstList.then(() => Bun.sleep(LOCAL_LIST_GRACE_MS))]);
    this.localListsIn = true;
  }

  /** When the catalogue's content last changed; undefined before any provider gave its list. */
  get updatedAt(): Date | undefined {
    return this.built?.updatedAt;
  }

  /**
   * Asks every provider for its list again and publishes the result. Concurrent calls share one
   * refresh; the next is scheduled when it ends.
   */
  refresh(): Promise<void> {
    if (!this.refreshing) {
      clearTimeout(this.timer);
      this.refreshing = this.listAll()
        .catch((err) => {
          this.deps.log.error({ err }, "the voice catalogue could not be built");
          return false;
        })
        .then((complete) => {
          this.refreshing = undefined;
          if (!this.stopped) this.timer = setTimeout(() => void this.refresh(), complete ? this.options.refreshMs : Math.min(this.options.retryMs, this.options.refreshMs));
        });
    }
    return this.refreshing;
  }

  /**
   * The hook for cloned voices: `source` gives a tenant's own entries, searched with the
   * catalogue's when `/v1/voices` is called with its key (see `search`).
   */
  setOwnVoices(source: OwnVoices): void {
    this.ownVoices = source;
  }

  /**
   * The hook for tenants' private voices: the providers' lists hold the voices tenants cloned on the
   * operator's account, which are theirs alone; from the next refresh on they are left out.
   */
  hideVoices(isPrivate: (voiceId: string) => boolean): void {
    this.hidden = isPrivate;
  }

  /**
   * The hook for clone counts: how many times each provider's voice was cloned (`metrics.clones`,
   * and its popularity), asked at every metrics refresh from then on.
   */
  countClones(counter: CloneCounter): void {
    this.deps.metrics.countClones(counter);
  }

  /** Reads the metrics again now (the background does it every `VOICE_METRICS_REFRESH_MS`); re-sorts `popular` when they changed. */
  refreshMetrics(): Promise<boolean> {
    return this.deps.metrics.refresh();
  }

  /** A tenant's own voices, through the hook (none without one). */
  ownVoicesOf(tenantId: string): Promise<readonly VoiceEntry[]> {
    return this.ownVoices?.(tenantId) ?? Promise.resolve([]);
  }

  /**
   * A page of the catalogue (see `searchVoices`), with `own` entries (a tenant's cloned voices,
   * made by `entryOfVoice` with `scope: organization`) searched alongside: they pass the same
   * filters, sort among the others by the same rules, and come first in `featured`.
   * 503 `voice_catalogue_unavailable` while no provider's list could be had.
   */
  search(query: VoiceQuery, options: { own?: readonly VoiceEntry[] } = {}): VoicePage {
    const built = this.available();
    return searchVoices(built, query, options.own?.length ? VoiceIndex.of(options.own) : undefined);
  }

  /** The catalogue's entry of `model` (canonical slug) and voice id. */
  entry(model: string, voiceId: string): VoiceEntry | undefined {
    return this.built?.index.entry(model, voiceId);
  }

  /** Every entry of a voice id, one per model that has it (for `/el/v1/voices/{id}`); [] when unknown. */
  entriesOfVoice(voiceId: string): readonly VoiceEntry[] {
    return this.built?.byVoice.get(voiceId) ?? [];
  }

  /** Seconds until the catalogue next tries its providers (a 503's `Retry-After`). */
  get retryAfterSeconds(): number {
    return Math.ceil(Math.min(this.options.retryMs, this.options.refreshMs) / 1000);
  }

  private available(): Built {
    if (!this.built) throw new ApiError("voice_catalogue_unavailable", "no provider's voice list could be had yet; try again shortly", { retry_after: this.retryAfterSeconds });
    return this.built;
  }

  /** The TTS bindings whose provider this build has an adapter for, in catalogue order. */
  private bindings(): Binding[] {
    return this.deps.catalogue.bindings.filter((b) => b.capability === "tts" && this.deps.providers.has(b.provider.id));
  }

  /**
   * Lists every provider; true when every one answered. The first build publishes each list as it
   * comes (a request waits for the embedded engines' lists, never for a cloud provider's); later refreshes
   * publish once, when all have answered or failed.
   */
  private async listAll(): Promise<boolean> {
    const bindings = this.bindings();
    const ids = [...new Set(bindings.map((b) => b.provider.id))];
    const first = !this.built;
    await this.deps.sightings.load();
    const at = new Date();
    const sightingsOf = (id: string): Sighting[] =>
      bindings.filter((b) => b.provider.id === id).flatMap((b) => (this.lists.get(id) ?? []).map((v) => ({ provider: id, model: b.canonical, voice: v.id })));
    const local = new Set(ids.filter((id) => this.deps.catalogue.provider(id)?.kind === "local"));
    const answered = await Promise.all(
      ids.map(async (id) => {
        const ok = await this.list(id);
        local.delete(id);
        if (ok && !this.stopped) {
          this.deps.sightings.note(sightingsOf(id), at);
          if (first) await this.publish(at);
        }
        if (first && local.size === 0) this.localsListed();
        return ok;
      }),
    );
    if (this.stopped || this.lists.size === 0) return false;
    this.writing = this.deps.sightings.write(ids.filter((_, i) => answered[i]).flatMap(sightingsOf), at);
    await this.writing;
    this.writing = undefined;
    await this.publish(at);
    return answered.every(Boolean);
  }

  private async list(id: string): Promise<boolean> {
    const ms = this.options.listTimeoutMs;
    try {
      this.lists.set(id, await withTimeout(this.deps.providers.get(id)!.voices(), ms, `${id} gave no voice list within ${ms} ms`, () => {}));
      return true;
    } catch (err) {
      this.deps.log.warn({ err, provider: id, kept: this.lists.get(id)?.length ?? 0 }, "a provider's voice list could not be had; its last list stays");
      return false;
    }
  }

  /**
   * Makes the entries of the lists as they are now the catalogue, one publication after another.
   * When their content is the last one's (only figures or last sightings moved), the last index's
   * tokens and postings are kept and only `popular` is sorted again. A large catalogue is built a
   * chunk at a time, the event loop serving requests in between; they search the last index
   * meanwhile.
   */
  private publish(at: Date): Promise<void> {
    const next = this.publishing.then(async () => {
      const entries = await entriesOfLists(this.lists, this.bindings(), { ...this.deps, hidden: this.hidden }, at);
      const last = this.built;
      const contentVersion = await contentVersionOf(entries);
      const same = last !== undefined && last.index.contentVersion === contentVersion && last.index.size === entries.length;
      const index = await VoiceIndex.build(entries, same ? last.index : undefined);
      const byVoice = new Map<string, VoiceEntry[]>();
      for (const e of entries) byVoice.set(e.voice.id, [...(byVoice.get(e.voice.id) ?? []), e]);
      this.built = { index, updatedAt: same ? last.updatedAt : new Date(), byVoice };
      this.listed();
      if (!same) this.deps.log.info({ voices: entries.length, providers: [...this.lists.keys()] }, "voice catalogue updated");
    });
    this.publishing = next.catch((err) => this.deps.log.error({ err }, "the voice catalogue could not be published"));
    return next;
  }
}
