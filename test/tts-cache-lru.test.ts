import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { DiskStore } from "../src/sessions/tts-cache/disk-store.ts";
import { entryBytes } from "../src/sessions/tts-cache/entry.ts";
import { cacheKey } from "../src/sessions/tts-cache/key.ts";
import { MemoryLru } from "../src/sessions/tts-cache/memory-lru.ts";
import { tempDir } from "./helpers/temp-dirs.ts";

const entry = (bytes: number) => ({ audio: new Uint8Array(bytes), timings: [] });

describe("the cache's bounds", () => {
  test("memory lets the least recently used entries go once their bytes pass the bound", () => {
    let evicted = 0;
    const size = entryBytes(entry(1000));
    const lru = new MemoryLru(size * 2, (n) => (evicted += n));
    lru.set("a", entry(1000));
    lru.set("b", entry(1000));
    lru.get("a");
    lru.set("c", entry(1000));
    expect(lru.get("b")).toBeUndefined();
    expect(lru.get("a")).toBeDefined();
    expect(lru.get("c")).toBeDefined();
    expect(evicted).toBe(1);
    expect(lru.bytes).toBe(size * 2);
  });

  test("the directory removes its oldest files past its bound, and reads back what it kept", async () => {
    const dir = tempDir("voxroute-tts-disk-");
    let evicted = 0;
    const disk = new DiskStore(dir, 2500, (n) => (evicted += n));
    await disk.set("a", { audio: new Uint8Array(1000).fill(1), timings: [{ alignment: { chars: ["a"], starts: [0], ends: [0.1] } }] });
    await disk.set("b", entry(1000));
    await disk.set("c", entry(1000));
    expect(evicted).toBe(1);
    expect(await disk.get("a")).toBeUndefined();
    await Bun.sleep(20);
    expect(readdirSync(dir).sort()).toEqual(["b.tts", "c.tts"]);
    const again = new DiskStore(dir, 2500, () => {});
    expect((await again.get("c"))?.audio.byteLength).toBe(1000);
  });
});

describe("the key", () => {
  const base = { scope: "t1", provider: "openai", model: "tts-1", voice: "alloy", encoding: "pcm_s16le", sampleRate: 24000, options: {}, alignment: false, rulesVersion: "", text: "Hello there." };
  test("changes with anything that changes the audio, not with white space", () => {
    const k = cacheKey(base);
    expect(cacheKey({ ...base, text: "  Hello   there. " })).toBe(k);
    for (const change of [{ scope: "t2" }, { voice: "echo" }, { sampleRate: 16000 }, { speed: 1.2 }, { options: { stability: "0.3" } }, { rulesVersion: "d1:2" }, { text: "Hello there!" }]) {
      expect(cacheKey({ ...base, ...change })).not.toBe(k);
    }
  });

  test("with timings asked, keeps the white space they time", () => {
    const timed = { ...base, alignment: true };
    expect(cacheKey({ ...timed, text: "Hello there. " })).not.toBe(cacheKey(timed));
  });
});
