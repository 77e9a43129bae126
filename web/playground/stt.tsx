import { useEffect, useRef, useState } from "preact/hooks";
import { queryOf } from "../api.ts";
import { closeText, openSocket } from "../socket.ts";
import type { Providers } from "./catalogue.ts";
import { type Microphone, startMicrophone } from "./microphone.ts";
import { type Mark, TurnTimeline } from "./turn-timeline.tsx";

const RATES = [16000, 24000, 48000];

interface Transcript {
  finals: string[];
  interim: string;
  marks: Mark[];
  audioMs: number;
  state: "idle" | "connecting" | "listening" | "closing" | "closed";
  note: string;
}

const IDLE: Transcript = { finals: [], interim: "", marks: [], audioMs: 0, state: "idle", note: "" };

/** The microphone to `/v1/stt`: interim and final text live, the turn signals on a timeline. */
export function SttPlayground({ apiKey, providers }: { apiKey: string; providers: Providers }) {
  const models = Object.entries(providers).flatMap(([provider, p]) => p.stt.filter((m) => m.streaming).map((m) => ({ provider, model: m.canonical, label: `${p.name}: ${m.canonical}` })));
  const [choice, setChoice] = useState(0);
  const [rate, setRate] = useState(16000);
  const [t, setT] = useState(IDLE);
  const socket = useRef<WebSocket | undefined>(undefined);
  const mic = useRef<Microphone | undefined>(undefined);
  useEffect(
    () => () => {
      mic.current?.stop();
      socket.current?.close();
    },
    [],
  );

  const start = async () => {
    const { provider, model } = models[choice];
    let current: Transcript = { ...IDLE, state: "connecting" };
    const update = (change: Partial<Transcript>) => setT((current = { ...current, ...change }));
    update({});
    const ws = openSocket(`/v1/stt${queryOf({ model, provider, audio_format: `pcm_${rate}` })}`, apiKey);
    socket.current = ws;
    ws.onmessage = (m) => {
      const e = JSON.parse(m.data);
      if (e.type === "stt.session.started") update({ state: "listening" });
      else if (e.type === "stt.transcript.interim") update({ interim: e.text });
      else if (e.type === "stt.transcript.final")
        update({ finals: [...current.finals, e.text], interim: "", marks: [...current.marks, { kind: "final", label: e.text, startMs: e.audio_start_ms, endMs: e.audio_end_ms, turnId: e.turn_id }] });
      else if (e.type === "stt.signal") update({ marks: [...current.marks, { kind: "signal", label: e.signal, startMs: e.audio_ms, turnId: e.turn_id }] });
      else if (e.type === "stt.error") update({ note: `${e.code}: ${e.message}` });
      if (typeof e.audio_ms === "number" || typeof e.audio_end_ms === "number") update({ audioMs: Math.max(current.audioMs, e.audio_ms ?? e.audio_end_ms) });
    };
    ws.onclose = (c) => {
      mic.current?.stop();
      mic.current = undefined;
      update({ state: "closed", note: c.code === 1000 ? current.note : current.note || closeText(c) });
    };
    try {
      let sent = 0;
      mic.current = await startMicrophone(rate, (pcm) => {
        if (ws.readyState !== WebSocket.OPEN) return;
        ws.send(pcm);
        sent += pcm.byteLength;
        update({ audioMs: Math.max(current.audioMs, Math.round((sent / 2 / rate) * 1000)) });
      });
    } catch (err) {
      ws.close();
      update({ state: "closed", note: `the microphone could not be opened: ${(err as Error).message}` });
    }
  };
  const stop = () => {
    mic.current?.stop();
    mic.current = undefined;
    socket.current?.send(JSON.stringify({ type: "stt.session.close" }));
    setT({ ...t, state: "closing" });
  };

  const running = t.state === "connecting" || t.state === "listening";
  return (
    <div>
      <div class="filters">
        <div>
          <label for="stt-model">Speech-to-text model</label>
          <select id="stt-model" value={choice} disabled={running} onChange={(e) => setChoice(Number(e.currentTarget.value))}>
            {models.map((m, i) => (
              <option value={i}>{m.label}</option>
            ))}
          </select>
        </div>
        <div>
          <label for="stt-rate">Microphone sample rate</label>
          <select id="stt-rate" value={rate} disabled={running} onChange={(e) => setRate(Number(e.currentTarget.value))}>
            {RATES.map((r) => (
              <option value={r}>{r} Hz</option>
            ))}
          </select>
        </div>
        <div class="actions">
          {running ? (
            <button type="button" onClick={stop}>
              Stop
            </button>
          ) : (
            <button type="button" onClick={start} disabled={models.length === 0}>
              Start the microphone
            </button>
          )}
        </div>
      </div>
      <p class="muted" data-testid="stt-state">
        {t.state === "listening" ? "Listening: speak, and pause to end a turn." : t.state}
      </p>
      <div class="transcript" aria-live="polite" data-testid="stt-transcript">
        {t.finals.map((f) => (
          <p>{f}</p>
        ))}
        {t.interim && <p class="muted">{t.interim}…</p>}
      </div>
      <TurnTimeline marks={t.marks} audioMs={t.audioMs} />
      {t.note && (
        <p class="error" role="alert">
          {t.note}
        </p>
      )}
    </div>
  );
}
