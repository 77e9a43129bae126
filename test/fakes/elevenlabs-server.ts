// The ElevenLabs fake as its own process (for benchmarks): prints its URL, serves until killed.
// With FAKE_SPEECH_SPEED, its input-streaming speech streams at that many times real time. Its
// speech is made on a thread of its own, so that a new text does not stall its other sockets.
import { startFakeElevenLabs } from "./elevenlabs.ts";
import { speechSpeedFromEnv } from "./http-fake.ts";
import { speechThread } from "./speech-thread.ts";

const fake = startFakeElevenLabs({ speechSpeed: speechSpeedFromEnv(), speechMaker: speechThread() });
console.log(JSON.stringify({ url: fake.url }));
process.on("SIGTERM", () => {
  fake.stop();
  process.exit(0);
});
