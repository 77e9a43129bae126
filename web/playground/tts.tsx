import { useEffect, useRef, useState } from "preact/hooks";
import { queryOf } from "../api.ts";
import { closeText, openSocket } from "../socket.ts";
import { useApi } from "../use-api.ts";
import type { Providers, Speaker, VoicePage } from "./catalogue.ts";
import { PcmPlayer } from "./pcm-player.ts";
import { snippets, ttsQuery } from "./snippet.ts";

interface Run {
  state: "connecting" | "speaking" | "done" | "failed";
  firstAudioMs?: number;
  provider?: string;
  sampleRate?: number;
  bytes: number;
  samples: number;
  peak: number;
  note: string;
}

const streamingTts = (providers: Providers) => Object.entries(providers).filter(([, p]) => p.tts.some((m) => m.streaming));

/**
 * Text to `/v1/tts`, its audio into Web Audio as it arrives, with the time from sending the text to
 * the first audio. The provider, model and voice come from `/v1/providers` and `/v1/voices`.
 */
export function TtsPlayground({ apiKey, providers, speaker, onSpeaker }: { apiKey: string; providers: Providers; speaker: Speaker; onSpeaker: (s: Speaker) => void }) {
  const [text, setText] = useState("Hello! This is voxroute speaking, streamed into your browser as it is made.");
  const [run, setRun] = useState<Run>();
  const [tab, setTab] = useState(0);
  const player = useRef<PcmPlayer | undefined>(undefined);
  const socket = useRef<WebSocket | undefined>(undefined);
  const meter = useRef<ReturnType<typeof setInterval> | undefined>(undefined);
  const entry = providers[speaker.provider];
  const voices = useApi<VoicePage>(entry ? `/v1/voices${queryOf({ provider: speaker.provider, model: speaker.model, limit: 100, sort: "name" })}` : undefined);
  useEffect(
    () => () => {
      socket.current?.close();
      clearInterval(meter.current);
    },
    [],
  );

  const choose = (change: Partial<Speaker>) => onSpeaker({ ...speaker, ...change });
  const chooseProvider = (id: string) => {
    const p = providers[id];
    const model = p.tts.find((m) => m.streaming)!;
    onSpeaker({ provider: id, model: model.canonical, voice: p.defaults.tts?.model === model.id ? (p.defaults.tts.voice ?? "") : "" });
  };

  const speak = async (e: Event) => {
    e.preventDefault();
    socket.current?.close();
    clearInterval(meter.current);
    player.current?.stop();
    player.current ??= new PcmPlayer();
    const out = player.current;
    await out.resume();
    const startSamples = out.samples;
    const ws = openSocket(ttsQuery(speaker), apiKey);
    socket.current = ws;
    let current: Run = { state: "connecting", bytes: 0, samples: 0, peak: 0, note: "" };
    // Only the newest run shows: an older one's close and late events change nothing on the page.
    const update = (change: Partial<Run>) => {
      current = { ...current, ...change };
      if (socket.current === ws) setRun(current);
    };
    update({});
    // The level is read while the run's audio plays, until it has played out after the close.
    let closed = false;
    const reading = setInterval(() => {
      update({ peak: out.peak });
      if (closed && out.idle) clearInterval(reading);
    }, 200);
    meter.current = reading;
    let sentAt = 0;
    ws.onopen = () => {
      sentAt = performance.now();
      ws.send(JSON.stringify({ type: "text", text }));
      ws.send(JSON.stringify({ type: "close" }));
    };
    ws.onmessage = (m) => {
      if (typeof m.data === "string") {
        const event = JSON.parse(m.data);
        if (event.type === "service.tts_audio_started") update({ provider: `${event.provider} (${event.model})`, sampleRate: event.sample_rate, state: "speaking" });
        else if (event.type === "service.tts_error") update({ note: `${event.code}: ${event.message}` });
        return;
      }
      if (current.firstAudioMs === undefined) update({ firstAudioMs: Math.round(performance.now() - sentAt) });
      out.play(m.data, current.sampleRate ?? 16000);
      update({ bytes: current.bytes + m.data.byteLength, samples: out.samples - startSamples });
    };
    ws.onclose = (c) => {
      const done = c.code === 1000;
      closed = true;
      update({ state: done ? "done" : "failed", note: done ? current.note : current.note || closeText(c) });
    };
  };

  const code = snippets(speaker, text);
  return (
    <form onSubmit={speak}>
      <div class="filters">
        <div>
          <label for="tts-provider">Provider</label>
          <select id="tts-provider" value={speaker.provider} onChange={(e) => chooseProvider(e.currentTarget.value)}>
            {streamingTts(providers).map(([id, p]) => (
              <option value={id}>{p.name}</option>
            ))}
          </select>
        </div>
        <div>
          <label for="tts-model">Model</label>
          <select id="tts-model" value={speaker.model} onChange={(e) => choose({ model: e.currentTarget.value, voice: "" })}>
            {entry?.tts
              .filter((m) => m.streaming)
              .map((m) => (
                <option value={m.canonical}>{m.canonical}</option>
              ))}
          </select>
        </div>
        <div>
          <label for="tts-voice">Voice</label>
          <select id="tts-voice" value={speaker.voice} onChange={(e) => choose({ voice: e.currentTarget.value })}>
            {!entry?.requires_voice && <option value="">the engine's default</option>}
            {speaker.voice && !voices.data?.voices.some((v) => v.voice.id === speaker.voice) && <option value={speaker.voice}>{speaker.voice}</option>}
            {voices.data?.voices.map((v) => (
              <option value={v.voice.id}>{v.voice.name}</option>
            ))}
          </select>
        </div>
      </div>
      <label for="tts-text">Text</label>
      <textarea id="tts-text" rows={3} maxLength={2000} value={text} onInput={(e) => setText(e.currentTarget.value)} />
      <button type="submit" disabled={run?.state === "connecting"}>
        Speak
      </button>
      {run && (
        <dl class="figures" aria-live="polite">
          <div>
            <dt>Time to first audio</dt>
            <dd data-testid="ttfa">{run.firstAudioMs === undefined ? "…" : `${run.firstAudioMs} ms`}</dd>
          </div>
          <div>
            <dt>Audio received</dt>
            <dd>{run.sampleRate ? `${(run.bytes / 2 / run.sampleRate).toFixed(2)} s` : "—"}</dd>
          </div>
          <div>
            <dt>Samples played</dt>
            <dd data-testid="tts-samples">{run.samples}</dd>
          </div>
          <div>
            <dt>Level</dt>
            <dd>
              <meter min={0} max={1} value={run.peak} data-testid="tts-peak" data-peak={run.peak} aria-label="Loudest output level" />
            </dd>
          </div>
          <div>
            <dt>Served by</dt>
            <dd data-testid="tts-state">{run.provider ?? run.state}</dd>
          </div>
        </dl>
      )}
      {run?.note && (
        <p class="error" role="alert">
          {run.note}
        </p>
      )}
      <h3>The same request in code</h3>
      <div class="row" role="tablist" aria-label="Snippet language">
        {code.map((c, i) => (
          <button type="button" role="tab" aria-selected={tab === i} class={tab === i ? "" : "secondary"} onClick={() => setTab(i)}>
            {c.label}
          </button>
        ))}
      </div>
      <pre role="tabpanel" aria-label={code[tab].label}>
        <code data-testid="tts-snippet">{code[tab].code}</code>
      </pre>
    </form>
  );
}
