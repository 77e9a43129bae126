import { and, eq, ne } from "drizzle-orm";
import type { Catalogue } from "../catalogue/catalogue.ts";
import { creditsOfUsd } from "../catalogue/pricing.ts";
import type { Database } from "../db/open.ts";
import { ApiError } from "../errors.ts";
import type { Ledger } from "../ledger/ledger.ts";
import type { Logger } from "../log.ts";
import type { TtsProvider } from "../providers/types.ts";
import type { CloneFile, VoiceCloning } from "../providers/voice-cloning.ts";

// Cloned voices (docs/voices.md#cloned-voices): made through the provider's own cloning API,
// owned by the tenant that made them, charged their provider's clone fee once when they become
// usable. Each voice's id is the provider's own id for it, so a request for it reaches the provider
// unchanged; routing keeps it to that provider and to its owner (`routeOf`).
//
//   processing ──▶ active ──▶ deleting ──▶ (gone)
//        │  ╲                    ▲  │ the provider failed: back to where it was
//        ▼   ╲───────────────────┤  ▼
//      failed ───────────────────┘

export type CustomVoiceStatus = "processing" | "active" | "failed" | "deleting";

export type CustomVoiceRow = Database["schema"]["customVoices"]["$inferSelect"];

export interface CloneInput {
  provider: string;
  model?: string;
  name: string;
  description?: string;
  language?: string;
  files: CloneFile[];
}

/** What routing needs of a cloned voice, known without a database read. */
export interface ClonedVoiceRoute {
  tenantId: string;
  provider: string;
  status: CustomVoiceStatus;
}

export interface CustomVoicesOptions {
  /** How often a voice the provider is still processing is asked about. */
  pollMs: number;
  /** How often the routing table is read again (voices cloned or deleted by other instances). */
  refreshMs: number;
}

/** How long a voice may process before it counts as failed. */
const PROCESSING_LIMIT_MS = 10 * 60_000;

export class CustomVoices {
  private routes = new Map<string, ClonedVoiceRoute>();
  private readonly watched = new Set<string>();
  private refresher: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly database: Database,
    private readonly catalogue: Catalogue,
    private readonly providers: (id: string) => TtsProvider | undefined,
    private readonly ledger: Ledger,
    private readonly log: Logger,
    private readonly options: CustomVoicesOptions,
  ) {}

  /** Reads the routing table, keeps it fresh, and goes on watching voices still processing (an instance that watched them may be gone). */
  async start(): Promise<void> {
    await this.refresh();
    this.refresher = setInterval(() => void this.refresh().catch((err) => this.log.warn({ err }, "custom voices could not be read")), this.options.refreshMs);
    this.refresher.unref?.();
    for (const [id, route] of this.routes) if (route.status === "processing") this.watch(id);
  }

  stop(): void {
    clearInterval(this.refresher);
    this.watched.clear();
  }

  private async refresh(): Promise<void> {
    const t = this.database.schema.customVoices;
    const rows = await this.database.db.select({ id: t.id, tenantId: t.tenantId, provider: t.provider, status: t.status }).from(t);
    this.routes = new Map(rows.map((r) => [r.id, { tenantId: r.tenantId, provider: r.provider, status: r.status as CustomVoiceStatus }]));
  }

  /** The cloned voice `voiceId` names, if it is one (of any tenant). */
  routeOf(voiceId: string): ClonedVoiceRoute | undefined {
    return this.routes.get(voiceId);
  }

  /** The providers of this deployment that can clone (priced and able), in catalogue order. */
  cloners(): string[] {
    return this.catalogue.providers.filter((p) => p.cloneFee !== undefined && this.providers(p.id)?.cloning).map((p) => p.id);
  }

  /** The clone fee of `provider` in credits; 400 when it cannot clone. */
  private cloningOf(provider: string): { cloning: VoiceCloning; fee: number } {
    const spec = this.catalogue.provider(provider);
    const cloning = this.providers(provider)?.cloning;
    if (!spec || !cloning || spec.cloneFee === undefined) {
      const able = this.cloners();
      throw new ApiError("invalid_request", `${provider} cannot clone voices here${able.length ? `; these can: ${able.join(", ")}` : ""}`, { param: "provider" });
    }
    return { cloning, fee: creditsOfUsd(spec.cloneFee) };
  }

  /** Clones through the provider: the voice as it is now (`active`, or `processing` and watched). */
  async create(owner: { tenantId: string; keyId: string }, input: CloneInput): Promise<CustomVoiceRow> {
    const { cloning, fee } = this.cloningOf(input.provider);
    const model = input.model ? this.catalogue.lookup(input.model, "tts").find((b) => b.provider.id === input.provider)?.canonical : undefined;
    if (input.model && !model) throw new ApiError("invalid_request", `${input.provider} serves no TTS model ${input.model}`, { param: "model" });
    const { balance } = await this.ledger.snapshot(owner.tenantId);
    if (balance.paidCredits - balance.paidHeld < fee) throw new ApiError("insufficient_balance", `cloning a voice with ${input.provider} costs ${fee} credits`);
    const made = await cloning.clone({ name: input.name, files: input.files, ...optional({ ...input, model }) });
    const now = new Date();
    const row: CustomVoiceRow = {
      id: made.providerVoiceId,
      tenantId: owner.tenantId,
      keyId: owner.keyId,
      provider: input.provider,
      model: model ?? null,
      name: input.name,
      description: input.description ?? null,
      language: input.language ?? null,
      status: "processing",
      failureReason: null,
      feeCredits: fee,
      createdAt: now,
      updatedAt: now,
    };
    const t = this.database.schema.customVoices;
    await this.database.transaction((tx) => tx.insert(t).values(row));
    this.routes.set(row.id, { tenantId: row.tenantId, provider: row.provider, status: "processing" });
    if (made.status === "active") return this.activate(row);
    this.watch(row.id);
    return row;
  }

  /** The tenant's voice; another tenant's, or none, is 404. */
  async get(tenantId: string, id: string): Promise<CustomVoiceRow> {
    const t = this.database.schema.customVoices;
    const [row] = await this.database.db
      .select()
      .from(t)
      .where(and(eq(t.id, id), eq(t.tenantId, tenantId)));
    if (!row) throw new ApiError("not_found", `no cloned voice ${id}`);
    return row;
  }

  /** The tenant's voices, newest first. */
  list(tenantId: string): Promise<CustomVoiceRow[]> {
    const t = this.database.schema.customVoices;
    return this.database.db.select().from(t).where(eq(t.tenantId, tenantId)).orderBy(t.createdAt);
  }

  /** Deletes it at the provider, then here. 409 `stale_transition` while a delete is under way; 502 when the provider fails (the voice stays as it was). */
  async remove(tenantId: string, id: string): Promise<void> {
    const before = await this.get(tenantId, id);
    const t = this.database.schema.customVoices;
    const taken = await this.database.transaction((tx) =>
      tx
        .update(t)
        .set({ status: "deleting", updatedAt: new Date() })
        .where(and(eq(t.id, id), eq(t.tenantId, tenantId), ne(t.status, "deleting")))
        .returning({ id: t.id }),
    );
    if (!taken.length) throw new ApiError("stale_transition", `the voice ${id} is being deleted already`);
    this.setStatus(id, "deleting");
    try {
      const cloning = this.providers(before.provider)?.cloning;
      if (!cloning) throw new ApiError("custom_voices_unavailable", `${before.provider}, which holds the voice, is not configured here`);
      await cloning.remove(id);
    } catch (err) {
      await this.database.transaction((tx) => tx.update(t).set({ status: before.status, updatedAt: new Date() }).where(eq(t.id, id)));
      this.setStatus(id, before.status as CustomVoiceStatus);
      throw err instanceof ApiError ? err : new ApiError("upstream_error", `${before.provider} could not delete the voice`);
    }
    await this.database.transaction((tx) => tx.delete(t).where(eq(t.id, id)));
    this.routes.delete(id);
    this.watched.delete(id);
  }

  /** Usable at last: the fee is charged (once, whoever gets here first), then it routes. */
  private async activate(row: CustomVoiceRow): Promise<CustomVoiceRow> {
    try {
      await this.ledger.charge(row.tenantId, { credits: row.feeCredits, description: `voice clone ${row.id} (${row.provider})`, externalId: `voice_clone:${row.id}` });
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== "insufficient_balance") throw err;
      return this.fail(row, "the balance could not pay the clone fee when the voice was ready");
    }
    return this.settle(row, { status: "active", failureReason: null });
  }

  private async fail(row: CustomVoiceRow, reason: string): Promise<CustomVoiceRow> {
    this.log.info({ voice: row.id, provider: row.provider, reason }, "cloned voice failed");
    return this.settle(row, { status: "failed", failureReason: reason });
  }

  /** Moves a processing voice on; a voice deleted meanwhile stays deleted. */
  private async settle(row: CustomVoiceRow, next: { status: CustomVoiceStatus; failureReason: string | null }): Promise<CustomVoiceRow> {
    const t = this.database.schema.customVoices;
    const updatedAt = new Date();
    await this.database.transaction((tx) =>
      tx
        .update(t)
        .set({ ...next, updatedAt })
        .where(and(eq(t.id, row.id), eq(t.status, "processing"))),
    );
    this.setStatus(row.id, next.status);
    return { ...row, ...next, updatedAt };
  }

  private setStatus(id: string, status: CustomVoiceStatus): void {
    const route = this.routes.get(id);
    if (route) this.routes.set(id, { ...route, status });
  }

  /** Asks the provider about a processing voice until it is active, failed, gone, or past the limit. */
  private watch(id: string): void {
    if (this.watched.has(id)) return;
    this.watched.add(id);
    const since = Date.now();
    const tick = async () => {
      if (!this.watched.has(id)) return;
      const t = this.database.schema.customVoices;
      const [row] = await this.database.db.select().from(t).where(eq(t.id, id));
      if (row?.status !== "processing") return void this.watched.delete(id);
      const state = await this.providers(row.provider)
        ?.cloning?.status(id)
        .catch(() => ({ status: "processing" as const }));
      if (state?.status === "active") await this.activate(row);
      else if (!state) await this.fail(row, `${row.provider} no longer has the voice`);
      else if (state.status === "failed") await this.fail(row, state.reason);
      else if (Date.now() - since > PROCESSING_LIMIT_MS) await this.fail(row, `${row.provider} was still processing it after ${PROCESSING_LIMIT_MS / 1000} s`);
      else return later();
      this.watched.delete(id);
    };
    const later = () => void setTimeout(() => void tick().catch(retry), this.options.pollMs).unref?.();
    const retry = (err: unknown) => {
      this.log.warn({ err, voice: id }, "a cloned voice's status could not be checked");
      later();
    };
    later();
  }
}

function optional(input: CloneInput): { description?: string; language?: string; model?: string } {
  return {
    ...(input.description ? { description: input.description } : {}),
    ...(input.language ? { language: input.language } : {}),
    ...(input.model ? { model: input.model } : {}),
  };
}
