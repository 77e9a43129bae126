// The client sockets of the conversation benchmarks (bench:realtime, bench:telephony): WebSockets
// to the router or an upstream, and a caller's audio sent over one in real time.

export function socket(url: string, headers: Record<string, string> = {}): WebSocket {
  const ws = new WebSocket(url, { headers } as never);
  ws.binaryType = "arraybuffer";
  return ws;
}

export const opened = (ws: WebSocket) =>
  new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error("connection refused"));
  });

/** Sends `frames` one every 20 ms from now, each as `frame` makes it; resolves with when frame `speechEndFrame` (the speech's last) went. */
export async function playRealTime(ws: WebSocket, frames: Uint8Array[], speechEndFrame: number, frame: (bytes: Uint8Array) => string | Uint8Array = (bytes) => bytes): Promise<number> {
  const start = performance.now();
  let speechEnd = 0;
  for (const [i, bytes] of frames.entries()) {
    const due = start + i * 20 - performance.now();
    if (due > 0) await Bun.sleep(due);
    if (ws.readyState !== WebSocket.OPEN) break;
    ws.send(frame(bytes));
    if (i === speechEndFrame) speechEnd = performance.now();
  }
  return speechEnd;
}

/** The direct path's TTS hop: an application's tokens spoken on one Aura socket, opened at the first token; `onAudio` gets each audio frame. */
export function auraSpeaker(url: string, headers: Record<string, string>, onAudio: (audio: ArrayBuffer) => void, onError: (err: unknown) => void) {
  let tts: WebSocket | undefined;
  let ready: Promise<void> | undefined;
  return {
    speak(token: string, last: boolean): void {
      if (!tts) {
        tts = socket(url, headers);
        ready = opened(tts);
        tts.onmessage = (a) => typeof a.data !== "string" && onAudio(a.data as ArrayBuffer);
      }
      const ws = tts;
      ready!.then(() => {
        ws.send(JSON.stringify({ type: "Speak", text: token }));
        if (last) ws.send('{"type":"Flush"}');
      }, onError);
    },
    close: () => tts?.close(),
  };
}

/** The direct path's recognizer and application sockets, open, the application told its `setup`. */
export async function directHops(sttUrl: string, headers: Record<string, string>, appUrl: string): Promise<{ stt: WebSocket; appWs: WebSocket; close(): void }> {
  const stt = socket(sttUrl, headers);
  const appWs = socket(appUrl);
  await Promise.all([opened(stt), opened(appWs)]);
  appWs.send(JSON.stringify({ type: "setup", sessionId: "direct", profileId: "direct", callSid: "", from: "", to: "", direction: "inbound", customParameters: {} }));
  return {
    stt,
    appWs,
    close: () => {
      stt.close();
      appWs.close();
    },
  };
}
