import type { Database } from "../db/open.ts";
import { asDate } from "../db/sql.ts";
import type { Logger } from "../log.ts";

// When each provider's voice of a model was first and last seen in its list, kept in the
// `voice_sightings` table: a voice's `first_seen_at` (the `newest` order, `added_after`) survives
// restarts and is the same on every instance sharing the database.

export interface Sighting {
  provider: string;
  /** The model's canonical slug. */
  model: string;
  voice: string;
}

export interface Seen {
  firstSeenAt: Date;
  lastSeenAt: Date;
}

/** Rows per statement: 5 parameters each, well under SQLite's and PostgreSQL's limits. */
const CHUNK = 500;

const keyOf = (s: Sighting) => `${s.provider}\u0000${s.model}\u0000${s.voice}`;

export class VoiceSightings {
  private readonly seen = new Map<string, Seen>();
  private loaded = false;

  constructor(
    private readonly database: Database,
    private readonly log: Logger,
  ) {}

  of(s: Sighting): Seen | undefined {
    return this.seen.get(keyOf(s));
  }

  /** Notes in memory that the voices were in their lists `at`: new ones are first seen then; every one is last seen then. */
  note(sightings: readonly Sighting[], at: Date): void {
    for (const s of sightings) {
      const k = keyOf(s);
      this.seen.set(k, { firstSeenAt: this.seen.get(k)?.firstSeenAt ?? at, lastSeenAt: at });
    }
  }

  /**
   * Writes what `note` noted of these voices; another instance may have seen one first, and the
   * table's first sighting wins. When the database cannot take it, the times stay in memory and
   * are written with a later refresh.
   */
  async write(sightings: readonly Sighting[], at: Date): Promise<void> {
    try {
      for (let i = 0; i < sightings.length; i += CHUNK) {
        const chunk = sightings.slice(i, i + CHUNK);
        const rows = await this.database.sql.transaction((tx) =>
          tx.query<{ provider: string; model: string; voice: string; first_seen_at: unknown }>(
            `INSERT INTO voice_sightings (provider, model, voice, first_seen_at, last_seen_at) VALUES ${chunk.map(() => "(?, ?, ?, ?, ?)").join(", ")} ` +
              "ON CONFLICT (provider, model, voice) DO UPDATE SET last_seen_at = excluded.last_seen_at RETURNING provider, model, voice, first_seen_at",
            chunk.flatMap((s) => [s.provider, s.model, s.voice, this.seen.get(keyOf(s))?.firstSeenAt ?? at, at]),
          ),
        );
        for (const r of rows) this.seen.set(keyOf(r), { firstSeenAt: asDate(r.first_seen_at), lastSeenAt: at });
      }
    } catch (err) {
      this.log.warn({ err }, "voice sightings could not be written; kept in memory until the next refresh");
    }
  }

  /** Every sighting already in the table, read once (until it succeeds; later ones come back from each write). */
  async load(): Promise<void> {
    if (this.loaded) return;
    try {
      const rows = await this.database.sql.query<{ provider: string; model: string; voice: string; first_seen_at: unknown; last_seen_at: unknown }>(
        "SELECT provider, model, voice, first_seen_at, last_seen_at FROM voice_sightings",
      );
      for (const r of rows) this.seen.set(keyOf(r), { firstSeenAt: asDate(r.first_seen_at), lastSeenAt: asDate(r.last_seen_at) });
      this.loaded = true;
    } catch (err) {
      this.log.warn({ err }, "voice sightings could not be read; voices count as first seen now");
    }
  }
}
