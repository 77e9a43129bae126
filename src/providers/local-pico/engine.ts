import { readFileSync } from "node:fs";
import { basename } from "node:path";
import picoWasm from "@echogarden/svoxpico-wasm/svoxpico.wasm" with { type: "file" };
import { UnknownVoiceError, type LocalEngine } from "../local-engine-types.ts";
import { ensureVoiceFiles, PICO_VOICES } from "./voices.ts";

// SVOX Pico through its C API (picoapi.h), compiled to WASM. One Pico "system" and engine per
// voice, created on first use and kept for the worker's life.

/** picodefs.h status codes. */
const PICO = { ok: 0, stepIdle: 200, stepBusy: 201 } as const;
/** What Pico is given, in bytes: the system's working memory, and the buffer each getData fills. */
const BYTES = { system: 3_000_000, out: 16384 } as const;
const SAMPLE_RATE = 16000;

interface PicoModule {
  HEAPU8: Uint8Array;
  HEAP16: Int16Array;
  HEAP32: Int32Array;
  FS: { writeFile(path: string, data: Uint8Array): void };
  _malloc(size: number): number;
  _free(ptr: number): void;
  [fn: `_pico${string}`]: (...args: number[]) => number;
}

export interface PicoOptions {
  voicesDir: string;
  voicesUrl: string;
  /** Voice ids offered; the others are unknown here. Unset: all. */
  offered?: string[];
}

export async function createPicoEngine(options: PicoOptions): Promise<LocalEngine> {
  const { default: init } = await import("@echogarden/svoxpico-wasm");
  // Emscripten's loader is told where the WASM is: by itself it looks beside its script, which in `bun run build`'s executable is elsewhere.
  const m: PicoModule = await init({ locateFile: () => picoWasm });
  const engines = new Map<string, Promise<number>>();
  const voices = PICO_VOICES.filter((v) => !options.offered || options.offered.includes(v.id));

  const cString = (text: string) => {
    const bytes = new TextEncoder().encode(text);
    const ptr = m._malloc(bytes.length + 1);
    m.HEAPU8.set(bytes, ptr);
    m.HEAPU8[ptr + bytes.length] = 0;
    return { ptr, length: bytes.length + 1 };
  };
  const check = (code: number, what: string) => {
    if (code !== PICO.ok) throw new Error(`pico: ${what} failed with code ${code}`);
  };

  async function newEngine(voiceId: string): Promise<number> {
    const voice = voices.find((v) => v.id === voiceId);
    if (!voice) throw new UnknownVoiceError("svox-pico", voiceId);
    const files = await ensureVoiceFiles(voice, options.voicesDir, options.voicesUrl);

    const memory = m._malloc(BYTES.system);
    const out = m._malloc(4);
    check(m._pico_initialize(memory, BYTES.system, out), "initialize");
    const system = m.HEAP32[out >> 2];
    const voiceName = cString(`voxroute-${voiceId}`);
    check(m._pico_createVoiceDefinition(system, voiceName.ptr), "createVoiceDefinition");
    for (const path of files) {
      const virtual = `/${voiceId}-${basename(path)}`;
      m.FS.writeFile(virtual, readFileSync(path));
      const name = cString(virtual);
      check(m._pico_loadResource(system, name.ptr, out), `loadResource ${basename(path)}`);
      const resource = m.HEAP32[out >> 2];
      const resourceName = m._malloc(32);
      check(m._pico_getResourceName(system, resource, resourceName), "getResourceName");
      check(m._pico_addResourceToVoiceDefinition(system, voiceName.ptr, resourceName), "addResourceToVoiceDefinition");
    }
    check(m._pico_newEngine(system, voiceName.ptr, out), "newEngine");
    const engine = m.HEAP32[out >> 2];
    m._free(out);
    return engine;
  }

  const engineFor = (voiceId: string | undefined) => {
    if (!voiceId) throw new UnknownVoiceError("svox-pico", "(none)");
    let engine = engines.get(voiceId);
    if (!engine) {
      engine = newEngine(voiceId);
      engine.catch(() => engines.delete(voiceId));
      engines.set(voiceId, engine);
    }
    return engine;
  };

  // Scratch buffers shared by every synthesis in this (single-threaded) worker.
  const outBuffer = m._malloc(BYTES.out);
  const counters = m._malloc(8); // int16 bytesPut | int16 bytesReceived | int16 dataType

  const ready = new Map<string, number>();

  return {
    voices: () => voices.map(({ files, ...v }) => v),
    voiceNames: () => voices.map((v) => v.id),
    async prepare(voiceId) {
      ready.set(voiceId!, await engineFor(voiceId));
      return SAMPLE_RATE;
    },
    synthesize(text, voiceId, onAudio, speed) {
      const engine = ready.get(voiceId!);
      if (engine === undefined) throw new Error(`pico voice ${voiceId} was not prepared`);
      // Pico's own pace markup, in percent of the natural pace (it takes 20 to 500).
      const input = cString(speed && speed !== 1 ? `<speed level="${Math.round(speed * 100)}">${text}</speed>` : text);
      try {
        let offset = 0;
        while (offset < input.length) {
          const chunk = Math.min(input.length - offset, 32767);
          check(m._pico_putTextUtf8(engine, input.ptr + offset, chunk, counters), "putTextUtf8");
          offset += m.HEAP16[counters >> 1];
          let status: number = PICO.stepBusy;
          while (status === PICO.stepBusy) {
            status = m._pico_getData(engine, outBuffer, BYTES.out, counters + 2, counters + 4);
            if (status !== PICO.stepBusy && status !== PICO.stepIdle) check(status, "getData");
            const received = m.HEAP16[(counters + 2) >> 1];
            if (received > 0) onAudio(m.HEAPU8.slice(outBuffer, outBuffer + received));
          }
        }
      } finally {
        m._free(input.ptr);
      }
    },
  };
}
