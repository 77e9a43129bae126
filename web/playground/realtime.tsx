import { useEffect, useRef, useState } from "preact/hooks";
import { api, describeFailure, queryOf } from "../api.ts";
import { closeText, openSocket } from "../socket.ts";
import { type Microphone, startMicrophone } from "./microphone.ts";
import { PcmPlayer } from "./pcm-player.ts";

interface Profile {
  id: string;
  name: string;
  pipeline: { stt: { model: string; input?: { audio_format?: string } }; tts: { model: string; voice?: string; format?: string } };
}

interface Line {
  who: "caller" | "answer";
  id: string;
  text: string;
  /** An interrupted answer's: what the caller had time to hear of it (`spoken_text`). */
  heard?: string;
}

/** An interrupted answer: what the caller heard of it, and the rest of its text marked as not heard. */
function Interrupted({ text, heard }: { text: string; heard: string }) {
  const rest = text.startsWith(heard) ? text.slice(heard.length).trim() : "";
  return (
    <>
      <span class="heard">{heard}</span> <em>(interrupted)</em>{" "}
      {rest && (
        <span class="unheard">
          not heard: <del>{rest}</del>
        </span>
      )}
    </>
  );
}

/** `pcm_16000` → 16000; µ-law is not something the page records or plays. */
const pcmRate = (format = "pcm_16000") => (/^pcm_(\d+)$/.exec(format) ? Number(format.slice(4)) : undefined);

/**
 * A conversation with one of the account's realtime profiles on `/v1/realtime`, opened with a
 * single-use client secret minted for it: the microphone in, the answers played as they come, and
 * dropped at once when the caller talks over them (`realtime.response.interrupted`).
 */
export function RealtimePlayground({ apiKey }: { apiKey: string }) {
  const [profiles, setProfiles] = useState<Profile[]>();
  const [profile, setProfile] = useState<Profile>();
  const [lines, setLines] = useState<Line[]>([]);
  const [state, setState] = useState("idle");
  const [error, setError] = useState("");
  const socket = useRef<WebSocket | undefined>(undefined);
  const mic = useRef<Microphone | undefined>(undefined);
  const player = useRef<PcmPlayer | undefined>(undefined);
  useEffect(
    () => () => {
      mic.current?.stop();
      socket.current?.close();
    },
    [],
  );

  useEffect(() => {
    api<{ items: Profile[] }>("/v1/realtime/profiles?limit=100", { key: apiKey }).then(
      (page) => setProfiles(page.items),
      (err) => setError(describeFailure(err)),
    );
  }, [apiKey]);

  const talk = async () => {
    if (!profile) return;
    const inRate = pcmRate(profile.pipeline.stt.input?.audio_format);
    const outRate = pcmRate(profile.pipeline.tts.format);
    if (!inRate || !outRate) return setError("this page speaks PCM only: the profile uses µ-law");
    setError("");
    setLines([]);
    setState("connecting");
    player.current ??= new PcmPlayer();
    const out = player.current;
    await out.resume();
    let current: Line[] = [];
    const say = (line: Line) => setLines((current = [...current.filter((l) => l.id !== line.id), line]));
    // The microphone first: refused, it spends no secret and opens no conversation.
    let ws: WebSocket | undefined;
    try {
      mic.current = await startMicrophone(inRate, (pcm) => ws?.readyState === WebSocket.OPEN && ws.send(pcm));
    } catch (err) {
      setState("idle");
      return setError(`the microphone could not be opened: ${describeFailure(err)}`);
    }
    try {
      const { client_secret } = await api<{ client_secret: string }>("/v1/realtime/client-secrets", { key: apiKey, body: { profile_id: profile.id } });
      ws = openSocket(`/v1/realtime${queryOf({ client_secret })}`);
      socket.current = ws;
      ws.onmessage = (m) => {
        if (typeof m.data !== "string") return out.play(m.data, outRate);
        const e = JSON.parse(m.data);
        if (e.type === "realtime.session.started") setState("talking");
        else if (e.type === "realtime.transcript.final") say({ who: "caller", id: `${e.turn_id}:${e.event_id}`, text: e.text });
        else if (e.type === "realtime.response.text") {
          const before = current.find((l) => l.id === e.response_id);
          say({ who: "answer", id: e.response_id, text: `${before?.text ?? ""}${e.token}` });
        } else if (e.type === "realtime.response.interrupted") {
          out.stop();
          const before = current.find((l) => l.id === e.response_id);
          if (before) say({ ...before, heard: e.spoken_text });
        } else if (e.type === "realtime.error") setError(`${e.code}: ${e.message}`);
      };
      ws.onclose = (c) => {
        mic.current?.stop();
        mic.current = undefined;
        setState("ended");
        if (c.code !== 1000) setError(closeText(c));
      };
    } catch (err) {
      mic.current?.stop();
      mic.current = undefined;
      setError(describeFailure(err));
      setState("idle");
    }
  };
  const hangUp = () => {
    mic.current?.stop();
    mic.current = undefined;
    socket.current?.send(JSON.stringify({ type: "realtime.session.close" }));
  };

  return (
    <div>
      {profiles?.length ? (
        <div class="row">
          <label for="rt-profile">Realtime profile</label>
          <select id="rt-profile" value={profile?.id ?? ""} onChange={(e) => setProfile(profiles.find((p) => p.id === e.currentTarget.value))}>
            <option value="">Choose one of your profiles</option>
            {profiles.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </div>
      ) : (
        <p>{profiles ? "You have no realtime profile yet." : "Loading your realtime profiles…"}</p>
      )}
      <p class="muted">
        A profile is made with <code>POST /v1/realtime/profiles</code> (docs/realtime-profiles.md); the conversation opens with a single-use client secret minted here.
      </p>
      {profile && (
        <>
          <p>
            <strong>{profile.name}</strong>: hears with {profile.pipeline.stt.model}, speaks with {profile.pipeline.tts.model}
            {profile.pipeline.tts.voice && ` (${profile.pipeline.tts.voice})`}.
          </p>
          {state === "connecting" || state === "talking" ? (
            <button type="button" onClick={hangUp}>
              Hang up
            </button>
          ) : (
            <button type="button" onClick={talk}>
              Talk
            </button>
          )}
          <span class="muted" data-testid="rt-state">
            {state}
          </span>
        </>
      )}
      <ol class="conversation" aria-live="polite">
        {lines.map((l) => (
          <li class={l.who}>
            <strong>{l.who === "caller" ? "You" : "Answer"}:</strong> {l.heard === undefined ? l.text : <Interrupted text={l.text} heard={l.heard} />}
          </li>
        ))}
      </ol>
      <p class="error" role="alert">
        {error}
      </p>
    </div>
  );
}
