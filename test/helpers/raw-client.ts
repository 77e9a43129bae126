import { readFileSync } from "node:fs";
import net from "node:net";

// Clients on a plain TCP socket that can stop reading: `pause()` stops taking bytes from the
// kernel, so its receive buffer and then the server's send buffer fill, as with a real client
// that has stalled. WebSocket frames and HTTP are spoken by hand (no library reads ahead).

class ByteReader {
  private buf: Buffer = Buffer.alloc(0);
  private waiter: (() => void) | undefined;
  ended = false;

  push(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    this.wake();
  }

  end(): void {
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }

  private more(): Promise<void> {
    return new Promise<void>((resolve) => (this.waiter = resolve));
  }

  /** Exactly `n` bytes, or undefined if the connection ended first. */
  async take(n: number): Promise<Buffer | undefined> {
    while (this.buf.length < n) {
      if (this.ended) return undefined;
      await this.more();
    }
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }

  /** Bytes up to and including `marker`. */
  async until(marker: string): Promise<Buffer | undefined> {
    for (;;) {
      const at = this.buf.indexOf(marker);
      if (at >= 0) return this.take(at + marker.length);
      if (this.ended) return undefined;
      await this.more();
    }
  }
}

function connectTcp(url: URL): Promise<{ socket: net.Socket; reader: ByteReader }> {
  return new Promise((resolve, reject) => {
    const reader = new ByteReader();
    const socket = net.connect(Number(url.port), url.hostname, () => resolve({ socket, reader }));
    socket.on("data", (d: Buffer) => reader.push(d));
    socket.on("end", () => reader.end());
    socket.on("close", () => reader.end());
    socket.on("error", (err) => {
      reader.end();
      reject(err);
    });
  });
}

export interface RawWsMessage {
  text?: string;
  binary?: Uint8Array;
}

/** A WebSocket client over a raw socket: masked frames out, every frame in, and a reader that can pause. */
export class RawWebSocket {
  readonly texts: string[] = [];
  readonly binary: Uint8Array[] = [];
  binaryBytes = 0;
  close: { code: number; reason: string } | undefined;
  /** Resolves once the server's close frame (or the end of the connection) has been read. */
  readonly closed: Promise<void>;

  private constructor(
    private readonly socket: net.Socket,
    private readonly reader: ByteReader,
  ) {
    this.closed = this.readFrames();
  }

  static async open(url: string, headers: Record<string, string> = {}): Promise<RawWebSocket> {
    const u = new URL(url);
    const { socket, reader } = await connectTcp(u);
    const key = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
    const lines = [
      `GET ${u.pathname}${u.search} HTTP/1.1`,
      `Host: ${u.host}`,
      "Upgrade: websocket",
      "Connection: Upgrade",
      `Sec-WebSocket-Key: ${key}`,
      "Sec-WebSocket-Version: 13",
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ];
    socket.write(`${lines.join("\r\n")}\r\n\r\n`);
    const head = (await reader.until("\r\n\r\n"))?.toString() ?? "";
    if (!head.startsWith("HTTP/1.1 101")) {
      socket.destroy();
      throw new Error(`upgrade refused: ${head.split("\r\n")[0]}`);
    }
    return new RawWebSocket(socket, reader);
  }

  send(frame: unknown): void {
    const payload = Buffer.from(typeof frame === "string" ? frame : JSON.stringify(frame));
    const mask = crypto.getRandomValues(new Uint8Array(4));
    const len = payload.length;
    const header = len < 126 ? Buffer.from([0x81, 0x80 | len]) : len < 65536 ? Buffer.from([0x81, 0xfe, len >> 8, len & 255]) : Buffer.concat([Buffer.from([0x81, 0xff]), bigEndian64(len)]);
    for (let i = 0; i < len; i++) payload[i] ^= mask[i & 3];
    this.socket.write(Buffer.concat([header, mask, payload]));
  }

  /** Stops reading: the kernel's buffers fill, then the server's. */
  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  /** Reads until the first audio (a binary frame) arrives, then stops reading. */
  async pauseAfterFirstAudio(): Promise<void> {
    for (let i = 0; i < 600 && this.binaryBytes === 0; i++) await Bun.sleep(50);
    this.pause();
  }

  destroy(): void {
    this.socket.destroy();
  }

  /**
   * Bytes of this connection held by the kernel (Linux, IPv4): what this end has not read yet and
   * what the server's end has not had acknowledged. With `binaryBytes`, what left the server.
   */
  queuedInKernel(): number {
    const { localPort, remotePort } = this.socket;
    let bytes = 0;
    for (const line of readFileSync("/proc/net/tcp", "utf8").trim().split("\n").slice(1)) {
      const [, local, remote, , queues] = line.trim().split(/\s+/);
      const [from, to] = [local, remote].map((address) => parseInt(address.split(":")[1], 16));
      const [tx, rx] = queues.split(":").map((hex) => parseInt(hex, 16));
      if (from === localPort && to === remotePort) bytes += rx;
      else if (from === remotePort && to === localPort) bytes += tx;
    }
    return bytes;
  }

  private async readFrames(): Promise<void> {
    for (;;) {
      const head = await this.reader.take(2);
      if (!head) return;
      const opcode = head[0] & 0x0f;
      let len = head[1] & 0x7f;
      if (len === 126) len = (await this.reader.take(2))!.readUInt16BE(0);
      else if (len === 127) len = Number((await this.reader.take(8))!.readBigUInt64BE(0));
      const payload = len ? await this.reader.take(len) : Buffer.alloc(0);
      if (!payload) return;
      if (opcode === 1) this.texts.push(payload.toString());
      else if (opcode === 2) {
        this.binary.push(new Uint8Array(payload));
        this.binaryBytes += payload.length;
      } else if (opcode === 8) {
        this.close = { code: payload.length >= 2 ? payload.readUInt16BE(0) : 1005, reason: payload.subarray(2).toString() };
        this.socket.end();
        return;
      }
    }
  }
}

function bigEndian64(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
}

/** An HTTP/1.1 request over a raw socket whose response body can stop being read. */
export class RawHttpRequest {
  status = 0;
  headers: Record<string, string> = {};
  readonly body: Buffer[] = [];
  bodyBytes = 0;
  /** The body ended cleanly (the last chunk of a chunked body, or all of a sized one). */
  complete = false;
  readonly done: Promise<void>;

  private constructor(
    private readonly socket: net.Socket,
    private readonly reader: ByteReader,
  ) {
    this.done = this.readResponse();
  }

  static async post(url: string, headers: Record<string, string>, body: string): Promise<RawHttpRequest> {
    const u = new URL(url);
    const { socket, reader } = await connectTcp(u);
    const data = Buffer.from(body);
    const lines = [`POST ${u.pathname}${u.search} HTTP/1.1`, `Host: ${u.host}`, `Content-Length: ${data.length}`, "Connection: close", ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    socket.write(Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`), data]));
    return new RawHttpRequest(socket, reader);
  }

  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  private async readResponse(): Promise<void> {
    const head = (await this.reader.until("\r\n\r\n"))?.toString();
    if (!head) return;
    const [statusLine, ...lines] = head.trim().split("\r\n");
    this.status = Number(statusLine.split(" ")[1]);
    for (const line of lines) {
      const at = line.indexOf(":");
      this.headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
    }
    if (this.headers["transfer-encoding"] === "chunked") {
      for (;;) {
        const size = parseInt((await this.reader.until("\r\n"))?.toString() ?? "", 16);
        if (!Number.isFinite(size)) return;
        if (size === 0) {
          this.complete = true;
          return;
        }
        const chunk = await this.reader.take(size + 2);
        if (!chunk) return;
        this.add(chunk.subarray(0, size));
      }
    }
    const length = Number(this.headers["content-length"] ?? 0);
    const rest = length ? await this.reader.take(length) : Buffer.alloc(0);
    if (!rest) return;
    this.add(rest);
    this.complete = true;
  }

  private add(chunk: Buffer): void {
    this.body.push(chunk);
    this.bodyBytes += chunk.length;
  }
}
