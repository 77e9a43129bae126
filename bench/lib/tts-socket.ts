// One native /v1/tts session as a benchmark client: open, one text, close.

/** Speaks `text` on a /v1/tts socket at `url`; resolves with the ms from creating the socket to its first audio frame, once it closes 1000. */
export function ttsFirstAudio(url: string, key: string, text: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const ws = new WebSocket(url, { headers: { Authorization: `Bearer ${key}` } } as never);
    ws.binaryType = "arraybuffer";
    let first = 0;
    ws.onopen = () => {
      ws.send(JSON.stringify({ type: "text", text }));
      ws.send(JSON.stringify({ type: "close" }));
    };
    ws.onmessage = (e) => {
      if (!first && typeof e.data !== "string") first = performance.now() - t0;
    };
    ws.onclose = (e) => (e.code === 1000 && first ? resolve(first) : reject(new Error(`session closed ${e.code} ${e.reason}${first ? "" : " before audio"}`)));
  });
}
