import http from "node:http";
import type { Answer } from "./documented-answer.ts";

/** A WebSocket upgrade request's answer: the refusal sent before the upgrade, or 101 (the socket is then closed). */
export function upgradeRequest(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  const { hostname, port, pathname, search } = new URL(url);
  const headersOf = (res: http.IncomingMessage) => new Headers(Object.entries(res.headers).filter((e): e is [string, string] => typeof e[1] === "string"));
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: hostname,
      port,
      path: pathname + search,
      headers: { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", ...headers },
    });
    req.on("upgrade", (res, socket) => {
      socket.destroy();
      resolve({ status: 101, headers: headersOf(res), body: new Uint8Array() });
    });
    req.on("response", async (res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      resolve({ status: res.statusCode!, headers: headersOf(res), body: new Uint8Array(Buffer.concat(chunks)) });
    });
    req.on("error", reject);
    req.end();
  });
}
