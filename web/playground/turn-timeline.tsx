// The turn signals and final transcripts of a session on its audio clock (milliseconds of audio
// sent), drawn as a timeline; the same marks are listed as text beside it.

export interface Mark {
  kind: "signal" | "final";
  label: string;
  startMs: number;
  endMs?: number;
}

const COLOURS: Record<string, string> = { started: "#166534", end: "#b91c1c", eager_end: "#b45309", resumed: "#1d4ed8" };

export function TurnTimeline({ marks, audioMs }: { marks: Mark[]; audioMs: number }) {
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
              <title>{`${m.label} at ${(m.startMs / 1000).toFixed(2)} s`}</title>
            </line>
          ),
        )}
      </svg>
      <figcaption>
        <ol class="marks" data-testid="stt-marks">
          {marks.map((m) => (
            <li>
              {(m.startMs / 1000).toFixed(2)} s: {m.kind === "final" ? `final “${m.label}”` : m.label}
            </li>
          ))}
        </ol>
      </figcaption>
    </figure>
  );
}
