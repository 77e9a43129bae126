import type { Database } from "../db/open.ts";
import { asNumber } from "../db/sql.ts";
import type { Logger } from "../log.ts";
import { NO_METRICS, type VoiceMetricsView } from "./voice-entry.ts";

// How much each voice is used on this deployment, from its own ledger: the activity records of
// TTS requests that named the voice, aggregated in the background every `refreshMs` (never per
// request) and kept in memory. Clones are counted by whoever makes cloned voices (`countClones`).

const DAY_MS = 86_400_000;

/** One voice's cloned copies, as the cloned voices' room counts them. */
export interface CloneCount {
  provider: string;
  voice: string;
  clones: number;
}

/** How many times each voice was cloned (voices not listed: none). Called at each refresh. */
export type CloneCounter = () => Promise<Iterable<CloneCount>>;

/**
 * The score `popular` sorts by: a week's characters, plus the year's weekly average (so a voice
 * used steadily keeps its place after a quiet week), plus 1000 characters' worth per clone.
 */
export function popularityScore(characters7d: number, characters1y: number, clones: number): number {
  return Math.round(characters7d + characters1y / 52 + 1000 * clones);
}

interface Uses {
  uses: number;
  characters7d: number;
  characters1y: number;
}

export class VoiceMetrics {
  /** Per provider, model and voice. */
  private uses = new Map<string, Uses>();
  /** Per provider and voice: a clone copies the voice, whatever the model. */
  private clones = new Map<string, number>();
  private clonesOf: CloneCounter | undefined;
  private timer: Timer | undefined;
  private running: Promise<boolean> | undefined;
  private stopped = false;
  private readonly listeners: (() => void)[] = [];

  constructor(
    private readonly database: Database,
    private readonly log: Logger,
    private readonly refreshMs: number,
  ) {}

  /**
   * The hook for cloned voices: `counter` says how many times each provider's voice was cloned,
   * and is asked at every refresh from then on (an entry's `metrics.clones`, and its popularity).
   */
  countClones(counter: CloneCounter): void {
    this.clonesOf = counter;
  }

  /** Called after a refresh that changed any voice's figures. */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Uses of `voice` of `model` (canonical slug) on `provider`. */
  of(provider: string, model: string, voice: string): VoiceMetricsView {
    const u = this.uses.get(`${provider}\u0000${model}\u0000${voice}`);
    const clones = this.clones.get(`${provider}\u0000${voice}`) ?? 0;
    if (!u && !clones) return NO_METRICS;
    const [uses, c7, c1y] = u ? [u.uses, u.characters7d, u.characters1y] : [0, 0, 0];
    return { popularity_score: popularityScore(c7, c1y, clones), likes: 0, saves: 0, shares: 0, uses, characters_7d: c7, characters_1y: c1y, clones };
  }

  /** Refreshes now, then every `refreshMs`. */
  start(): void {
    const tick = async () => {
      await this.refresh();
      if (!this.stopped) this.timer = setTimeout(tick, this.refreshMs);
    };
    void tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Reads the figures again; true when they changed. A failure keeps the last figures. Concurrent calls share one read. */
  refresh(): Promise<boolean> {
    this.running ??= this.read().finally(() => (this.running = undefined));
    return this.running;
  }

  private async read(): Promise<boolean> {
    let uses: Map<string, Uses>;
    try {
      uses = await this.aggregate(new Date());
    } catch (err) {
      this.log.warn({ err }, "voice metrics could not be read; the last figures stay");
      return false;
    }
    const clones = await this.countedClones();
    const changed = !sameMap(uses, this.uses) || !sameMap(clones, this.clones);
    this.uses = uses;
    this.clones = clones;
    if (changed) for (const listener of this.listeners) listener();
    return changed;
  }

  private async aggregate(now: Date): Promise<Map<string, Uses>> {
    // TTS requests that spoke at least one character, in the last year; the index on
    // (voice, started_at) leaves out every record without a voice.
    const rows = await this.database.sql.query<{ provider: string; model: string; voice: string; uses: unknown; c7: unknown; c1y: unknown }>(
      "SELECT provider, model, voice, count(*) AS uses, sum(CASE WHEN started_at >= ? THEN usage_amount ELSE 0 END) AS c7, sum(usage_amount) AS c1y " +
        "FROM activity WHERE voice IS NOT NULL AND started_at >= ? AND capability = 'tts' AND usage_amount > 0 GROUP BY provider, model, voice",
      [new Date(now.getTime() - 7 * DAY_MS), new Date(now.getTime() - 365 * DAY_MS)],
    );
    return new Map(rows.map((r) => [`${r.provider}\u0000${r.model}\u0000${r.voice}`, { uses: asNumber(r.uses), characters7d: asNumber(r.c7), characters1y: asNumber(r.c1y) }]));
  }

  private async countedClones(): Promise<Map<string, number>> {
    if (!this.clonesOf) return this.clones;
    try {
      const counted = new Map<string, number>();
      for (const c of await this.clonesOf()) if (c.clones > 0) counted.set(`${c.provider}\u0000${c.voice}`, c.clones);
      return counted;
    } catch (err) {
      this.log.warn({ err }, "counting cloned voices failed; the last counts stay");
      return this.clones;
    }
  }
}

function sameMap<V>(a: Map<string, V>, b: Map<string, V>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (JSON.stringify(b.get(k)) !== JSON.stringify(v)) return false;
  return true;
}
