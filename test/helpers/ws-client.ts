/** A recording WebSocket client for tests: every text event, binary frame and the close. */
export interface Recording {
  events: Record<string, any>[];
  audio: Uint8Array[];
  /** Text events and a marker per binary frame, in arrival order. */
  order: string[];
  close: { code: number; reason: string };
}

export interface Client {
  ws: WebSocket;
  /** What has arrived so far. */
  rec: Recording;
  opened: Promise<void>;
  closed: Promise<Recording>;
  /** Sends a frame (queued until the socket is open, in order). */
  send(frame: unknown): void;
}

export function connect(url: string, headers: Record<string, string> = {}): Client {
  const ws = new WebSocket(url, { headers } as any);
  ws.binaryType = "arraybuffer";
  const rec: Recording = { events: [], audio: [], order: [], close: { code: 0, reason: "" } };
  const opened = new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = (e) => reject(e);
  });
  const closed = new Promise<Recording>((resolve) => {
    ws.onclose = (e) => {
      rec.close = { code: e.code, reason: e.reason };
      resolve(rec);
    };
  });
  ws.onmessage = (e) => {
    if (typeof e.data === "string") {
      const ev = JSON.parse(e.data);
      rec.events.push(ev);
      rec.order.push(ev.type);
    } else {
      rec.audio.push(new Uint8Array(e.data));
      rec.order.push("audio");
    }
  };
  const send = (frame: unknown) => {
    const data = typeof frame === "string" ? frame : JSON.stringify(frame);
    if (ws.readyState === WebSocket.CONNECTING) void opened.then(() => ws.send(data));
    else ws.send(data);
  };
  return { ws, rec, opened, closed, send };
}

export const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

export function totalBytes(chunks: Uint8Array[]): number {
  return chunks.reduce((n, c) => n + c.byteLength, 0);
}

/** Peak absolute sample of 16-bit little-endian PCM. */
export function peak(chunks: Uint8Array[]): number {
  let max = 0;
  for (const c of chunks) {
    const view = new DataView(c.buffer, c.byteOffset, c.byteLength);
    for (let i = 0; i + 1 < c.byteLength; i += 2) max = Math.max(max, Math.abs(view.getInt16(i, true)));
  }
  return max;
}
