import { socket } from "./paced-sockets.ts";

// A caller on the router's `/v1/realtime` (bench:realtime, bench:cache): the socket once the session
// started, and the moments (performance.now) of each answer's milestones as the caller sees them.

export interface Answer {
  /** The caller's turn ended (`realtime.transcript.final`). */
  final: number;
  /** The answer's first token (`realtime.response.text`). */
  token: number;
  /** Its first audio byte. */
  audio: number;
}

export interface RouterConversation {
  ws: WebSocket;
  /** The next answer: resolves at its first audio byte, or with `untilDone` once its audio is done (`realtime.response.audio.done`). */
  nextAnswer(untilDone?: boolean): Promise<Answer>;
  close(): void;
}

export async function routerConversation(url: string, headers: Record<string, string>): Promise<RouterConversation> {
  const ws = socket(url, headers);
  let started!: () => void;
  let failed!: (err: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    started = resolve;
    failed = reject;
  });
  let current: { answer: Answer; untilDone: boolean; resolve: (a: Answer) => void } | undefined;
  const fail = (err: Error) => failed(err);
  ws.onmessage = (e) => {
    if (typeof e.data !== "string") {
      if (!current || current.answer.audio) return;
      current.answer.audio = performance.now();
      if (!current.untilDone) current.resolve(current.answer);
      return;
    }
    const ev = JSON.parse(e.data);
    if (ev.type === "realtime.session.started") started();
    else if (ev.type === "realtime.transcript.final" && current) current.answer.final ||= performance.now();
    else if (ev.type === "realtime.response.text" && current) current.answer.token ||= performance.now();
    else if (ev.type === "realtime.response.audio.done" && current?.untilDone) current.resolve(current.answer);
    else if (ev.type === "realtime.error") fail(new Error(`${ev.code}: ${ev.message}`));
  };
  ws.onclose = (e) => fail(new Error(`closed ${e.code} ${e.reason}`));
  await ready;
  return {
    ws,
    nextAnswer(untilDone = false) {
      return new Promise<Answer>((resolve, reject) => {
        failed = reject;
        current = { answer: { final: 0, token: 0, audio: 0 }, untilDone, resolve };
      });
    },
    close() {
      ws.onclose = null;
      ws.close();
    },
  };
}
