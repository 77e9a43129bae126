import type { Speaker } from "./catalogue.ts";

// The request the TTS playground makes, as code to copy: the key is a placeholder, never the tab's.

export function ttsQuery(s: Speaker): string {
  const q = new URLSearchParams({ model: s.model, provider: s.provider });
  if (s.voice) q.set("voice", s.voice);
  return `/v1/tts?${q}`;
}

export function snippets(s: Speaker, text: string): { label: string; code: string }[] {
  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${ttsQuery(s)}`;
  const frames = [JSON.stringify({ type: "text", text }), JSON.stringify({ type: "close" })];
  return [
    {
      label: "JavaScript (Bun)",
      code: `const ws = new WebSocket(${JSON.stringify(url)}, {
  headers: { Authorization: \`Bearer \${process.env.VOXROUTE_API_KEY}\` },
});
const audio = [];
ws.onopen = () => {
  ws.send(${JSON.stringify(frames[0])});
  ws.send(${JSON.stringify(frames[1])});
};
ws.onmessage = (e) => (typeof e.data === "string" ? console.log(e.data) : audio.push(e.data));
ws.onclose = () => Bun.write("speech.pcm", new Blob(audio)); // 16-bit PCM, see service.tts_audio_started`,
    },
    {
      label: "Python (websockets)",
      code: `import asyncio, os, websockets

async def main():
    headers = {"Authorization": f"Bearer {os.environ['VOXROUTE_API_KEY']}"}
    async with websockets.connect(${JSON.stringify(url)}, additional_headers=headers) as ws:
        await ws.send(${JSON.stringify(frames[0])})
        await ws.send(${JSON.stringify(frames[1])})
        with open("speech.pcm", "wb") as audio:
            async for message in ws:
                audio.write(message) if isinstance(message, bytes) else print(message)

asyncio.run(main())`,
    },
  ];
}
