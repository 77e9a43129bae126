import { useState } from "preact/hooks";
import type { Session } from "../session.ts";
import { SignIn } from "../sign-in.tsx";
import { useApi } from "../use-api.ts";
import type { Providers, Speaker } from "./catalogue.ts";
import { RealtimePlayground } from "./realtime.tsx";
import { SttPlayground } from "./stt.tsx";
import { TtsPlayground } from "./tts.tsx";
import { VoiceBrowser } from "./voices.tsx";

/** The first streaming TTS model of the catalogue, with its provider's default voice. */
function firstSpeaker(providers: Providers): Speaker {
  for (const [id, p] of Object.entries(providers)) {
    const model = p.tts.find((m) => m.streaming);
    if (model) return { provider: id, model: model.canonical, voice: p.defaults.tts?.model === model.id ? (p.defaults.tts.voice ?? "") : "" };
  }
  return { provider: "", model: "", voice: "" };
}

/** Hear a voice before writing code: TTS, STT and realtime need a sign-in; the voice browser does not. */
export function Playground({ session, onSignedIn }: { session?: Session; onSignedIn: (session: Session) => void }) {
  const catalogue = useApi<{ providers: Providers }>("/v1/providers");
  const [picked, setPicked] = useState<Speaker>();
  const providers = catalogue.data?.providers;
  const speaker = picked ?? (providers ? firstSpeaker(providers) : undefined);
  const use = (s: Speaker) => {
    setPicked(s);
    document.getElementById("tts-title")?.scrollIntoView();
    document.getElementById("tts-text")?.focus();
  };

  return (
    <>
      <h1>Playground</h1>
      <nav aria-label="Playground sections" class="row">
        <a href="#tts-title">Text to speech</a>
        <a href="#stt-title">Speech to text</a>
        <a href="#realtime-title">Realtime</a>
        <a href="#voices-title">Voices</a>
      </nav>
      <p class="error" role="alert">
        {catalogue.error}
      </p>
      {!session && <SignIn onSignedIn={onSignedIn} />}
      <section class="card" aria-labelledby="tts-title">
        <h2 id="tts-title">Text to speech</h2>
        {session && providers && speaker ? <TtsPlayground apiKey={session.key} providers={providers} speaker={speaker} onSpeaker={setPicked} /> : <p>Sign in to speak.</p>}
      </section>
      <section class="card" aria-labelledby="stt-title">
        <h2 id="stt-title">Speech to text</h2>
        {session && providers ? <SttPlayground apiKey={session.key} providers={providers} /> : <p>Sign in to transcribe your microphone.</p>}
      </section>
      <section class="card" aria-labelledby="realtime-title">
        <h2 id="realtime-title">Realtime</h2>
        {session ? <RealtimePlayground apiKey={session.key} /> : <p>Sign in to talk to one of your realtime profiles.</p>}
      </section>
      <section class="card" aria-labelledby="voices-title">
        <h2 id="voices-title">Voices</h2>
        <VoiceBrowser onUse={use} />
      </section>
    </>
  );
}
