import type { AppConnection, FakeApp } from "../fakes/conversation-relay-app.ts";
import { type PhoneStream, toPhoneAudio } from "../fakes/phone-caller.ts";
import { until } from "./realtime.ts";
import { concat, silence, speak } from "./speech.ts";
import type { TestServer } from "./server.ts";
import { bearer } from "./ws-client.ts";

// What the telephony tests share: a phone link of a profile, the caller's turn as a phone line
// carries it, and how long the speech in what came back lasts.

export async function phoneLink(on: TestServer, key: string, profileId: string, body: Record<string, unknown>) {
  const res = await fetch(`${on.url}/v1/realtime/profiles/${profileId}/phone-links`, { method: "POST", headers: { ...bearer(key), "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/** The frames of the fake application's `/dialer` digits, "1234#": 5 × (100 ms tone + 100 ms gap) in 20 ms frames. */
export const DIALED_FRAMES = 50;

/** A caller's turn: speech between silences, as µ-law at 8 kHz. */
export const PHONE_TURN = toPhoneAudio(concat([silence(300), speak("Thank you very much."), silence(900)]));

/** Seconds of 16 kHz PCM that are speech (10 ms windows above -40 dBFS), first to last. */
export function spokenSeconds(pcm: Int16Array): number {
  let [first, last] = [-1, -1];
  for (let i = 0; i + 160 <= pcm.length; i += 160) {
    let energy = 0;
    for (let j = 0; j < 160; j++) energy += pcm[i + j]! ** 2;
    if (Math.sqrt(energy / 160) / 32768 > 0.01) {
      if (first < 0) first = i;
      last = i + 160;
    }
  }
  return first < 0 ? 0 : (last - first) / 16000;
}

/** The application's connection whose `setup` named the call. */
export const appCallOf = (app: FakeApp, callSid: string): AppConnection | undefined => app.connections.find((c) => (c.received[0] as { callSid?: string } | undefined)?.callSid === callSid);

/** The caller speaks a turn, then again half a second into the answer (over it): the application's connection, once `clear` came and it heard `interrupt`. */
export async function talkOver(app: FakeApp, callSid: string, stream: PhoneStream): Promise<AppConnection> {
  await stream.play(PHONE_TURN);
  await until(() => stream.rec.media.length > 25, 20_000);
  await stream.play(PHONE_TURN);
  await until(() => stream.sent("clear").length === 1, 20_000);
  const conn = appCallOf(app, callSid)!;
  await until(() => conn.received.some((m) => m.type === "interrupt"));
  return conn;
}
