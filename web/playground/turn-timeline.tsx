// The turn signals and final transcripts of a session on its audio clock (milliseconds of audio
// sent), drawn as a timeline; the same marks are listed as text beside it, in the order of their times.

export interface Mark {
  kind: "signal" | "final";
  label: string;
  startMs: number;
  endMs?: number;
  turnId?: string;
}

/**
 * The marks in the order of their times, each final from where the speech of its turn began: a
 * final's audio spans its whole turn, from the commit before (the session's start for the first
 * turn), silence included, so its own start would list it before the speech it transcribes.
 */
function inTimeOrder(marks: Mark[]): Mark[] {
  const speechFrom = new Map<string, number>();
  for (const m of marks) if (m.kind === "signal" && m.label === "started" && m.turnId && !speechFrom.has(m.turnId)) speechFrom.set(m.turnId, m.startMs);
  const placed = marks.map((m) => {
    const from = m.kind === "final" && m.turnId ? speechFrom.get(m.turnId) : undefined;
    return from === undefined ? m : { ...m, startMs: Math.min(Math.max(m.startMs, from), m.endMs ?? from) };
  });
  // A stable sort: marks at the same time keep the order they came in.
  return placed.sort((a, b) => a.startMs - b.startMs);
}

const secondsOf = (ms: number) => (ms / 1000).toFixed(2);

const COLOURS: Record<string, string> = { started: "#166534", end: "#b91c1c", eager_end: "#b45309", resumed: "#1d4ed8" };

export function TurnTimeline({ marks: received, audioMs }: { marks: Mark[]; audioMs: number }) {
  const marks = inTimeOrder(received);
  const span = Math.max(audioMs, 5000);
  const x = (ms: number) => `${((ms / span) * 100).toFixed(2)}%`;
  return (
    <figure class="timeline">
      <svg width="100%" height="56" role="img" aria-label={`Turn timeline over ${(span / 1000).toFixed(1)} s of audio; its marks are listed below`}>
        <rect x="0" y="26" width={x(audioMs)} height="4" fill="#9ca3af" />
        {marks.map((m) =>
          m.kind === "final" ? (
            <rect x={x(m.startMs)} y="34" width={x((m.endMs ?? m.startMs) - m.startMs)} height="14" fill="#1d4ed8" opacity="0.35">
              <title>{m.label}</title>
            </rect>
          ) : (
            <line x1={x(m.startMs)} x2={x(m.startMs)} y1="4" y2="30" stroke={COLOURS[m.label] ?? "#111827"} stroke-width="3">
              <title>{`${m.label} at ${secondsOf(m.startMs)} s`}</title>
            </line>
          ),
        )}
      </svg>
      <figcaption>
        <ol class="marks" data-testid="stt-marks">
          {marks.map((m) => (
            <li>{m.kind === "final" ? `${secondsOf(m.startMs)}–${secondsOf(m.endMs ?? m.startMs)} s: final “${m.label}”` : `${secondsOf(m.startMs)} s: ${m.label}`}</li>
          ))}
        </ol>
      </figcaption>
    </figure>
  );
}
