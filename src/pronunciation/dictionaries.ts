import { and, desc, eq, isNull, lt, or } from "drizzle-orm";
import type { Database } from "../db/open.ts";
import { ApiError } from "../errors.ts";
import { type DictionaryVersion, Lexicon } from "./lexicon.ts";
import { type Locator, MAX_LOCATORS } from "./locators.ts";
import { MAX_RULES, type Rule } from "./rules.ts";

// The tenant's pronunciation dictionaries (docs/pronunciation.md). A change of the rules makes a
// new version; versions are never changed, so a locator naming one always says the same thing.

export type DictionaryRow = Database["schema"]["pronunciationDictionaries"]["$inferSelect"];

export interface Dictionary extends DictionaryRow {
  rules: Rule[];
}

const newId = () => crypto.randomUUID().replaceAll("-", "").slice(0, 20);

export class PronunciationDictionaries {
  constructor(private readonly database: Database) {}

  async create(tenantId: string, input: { name: string; description?: string; rules: Rule[] }): Promise<Dictionary> {
    const now = new Date();
    const row: DictionaryRow = { id: newId(), tenantId, name: input.name, description: input.description ?? null, latestVersionId: newId(), createdAt: now, archivedAt: null };
    const { pronunciationDictionaries: d, pronunciationDictionaryVersions: v } = this.database.schema;
    await this.database.transaction(async (tx) => {
      await tx.insert(d).values(row);
      await tx.insert(v).values({ id: row.latestVersionId, dictionaryId: row.id, rules: JSON.stringify(input.rules), createdAt: now });
    });
    return { ...row, rules: input.rules };
  }

  /** The tenant's dictionaries, newest first, `pageSize` at a time after `cursor` (the last one's id). */
  async list(tenantId: string, pageSize: number, cursor?: string): Promise<{ rows: DictionaryRow[]; hasMore: boolean }> {
    const d = this.database.schema.pronunciationDictionaries;
    const after = cursor ? await this.row(tenantId, cursor).catch(() => undefined) : undefined;
    if (cursor && !after) throw new ApiError("invalid_request", "cursor names no dictionary of this account", { param: "cursor" });
    const rows = await this.database.db
      .select()
      .from(d)
      .where(and(eq(d.tenantId, tenantId), isNull(d.archivedAt), after ? or(lt(d.createdAt, after.createdAt), and(eq(d.createdAt, after.createdAt), lt(d.id, after.id))) : undefined))
      .orderBy(desc(d.createdAt), desc(d.id))
      .limit(pageSize + 1);
    return { rows: rows.slice(0, pageSize), hasMore: rows.length > pageSize };
  }

  async get(tenantId: string, id: string): Promise<Dictionary> {
    const row = await this.row(tenantId, id);
    return { ...row, rules: await this.rulesOf(row, row.latestVersionId) };
  }

  /** The rules of one version (the latest when none is named). */
  async version(tenantId: string, id: string, versionId?: string): Promise<DictionaryVersion> {
    const row = await this.row(tenantId, id);
    const at = versionId ?? row.latestVersionId;
    return { id, versionId: at, rules: await this.rulesOf(row, at) };
  }

  /** Adds rules (one for a string already there takes its place): a new version. */
  addRules(tenantId: string, id: string, rules: Rule[]): Promise<Dictionary> {
    const added = new Set(rules.map((r) => r.string_to_replace));
    return this.change(tenantId, id, (old) => [...old.filter((r) => !added.has(r.string_to_replace)), ...rules]);
  }

  /** Removes the rules for these strings: a new version. */
  removeRules(tenantId: string, id: string, strings: string[]): Promise<Dictionary> {
    const gone = new Set(strings);
    return this.change(tenantId, id, (old) => old.filter((r) => !gone.has(r.string_to_replace)));
  }

  /** Replaces all the rules: a new version. */
  setRules(tenantId: string, id: string, rules: Rule[]): Promise<Dictionary> {
    return this.change(tenantId, id, () => rules);
  }

  /** The dictionaries a request names, compiled; none named is an empty lexicon. */
  async lexicon(tenantId: string, locators: Locator[]): Promise<Lexicon> {
    if (locators.length > MAX_LOCATORS) throw new ApiError("invalid_request", `at most ${MAX_LOCATORS} pronunciation dictionaries per request`, { param: "pronunciation_dictionaries" });
    const versions = await Promise.all(locators.map((l) => this.version(tenantId, l.id, l.versionId)));
    return new Lexicon(versions);
  }

  private async change(tenantId: string, id: string, next: (rules: Rule[]) => Rule[]): Promise<Dictionary> {
    const row = await this.row(tenantId, id);
    const rules = next(await this.rulesOf(row, row.latestVersionId));
    if (rules.length > MAX_RULES) throw new ApiError("invalid_request", `a dictionary holds at most ${MAX_RULES} rules`, { param: "rules" });
    const { pronunciationDictionaries: d, pronunciationDictionaryVersions: v } = this.database.schema;
    const versionId = newId();
    await this.database.transaction(async (tx) => {
      await tx.insert(v).values({ id: versionId, dictionaryId: id, rules: JSON.stringify(rules), createdAt: new Date() });
      await tx.update(d).set({ latestVersionId: versionId }).where(eq(d.id, id));
    });
    return { ...row, latestVersionId: versionId, rules };
  }

  private async row(tenantId: string, id: string): Promise<DictionaryRow> {
    const d = this.database.schema.pronunciationDictionaries;
    const [row] = await this.database.db
      .select()
      .from(d)
      .where(and(eq(d.id, id), eq(d.tenantId, tenantId)));
    if (!row) throw new ApiError("not_found", `no pronunciation dictionary ${id} in this account`, { param: "pronunciation_dictionary_id" });
    return row;
  }

  private async rulesOf(row: DictionaryRow, versionId: string): Promise<Rule[]> {
    const v = this.database.schema.pronunciationDictionaryVersions;
    const [version] = await this.database.db
      .select({ rules: v.rules })
      .from(v)
      .where(and(eq(v.id, versionId), eq(v.dictionaryId, row.id)));
    if (!version) throw new ApiError("not_found", `pronunciation dictionary ${row.id} has no version ${versionId}`, { param: "version_id" });
    return JSON.parse(version.rules) as Rule[];
  }
}
