import { createHash } from "node:crypto";
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { EngineVoice } from "../local-engine-types.ts";

// Pico's lingware is not in the npm package. Operators point PICO_VOICES_DIR at a directory holding
// the files; a missing file is fetched once from PICO_VOICES_URL (the public AOSP copy) and checked
// against its known SHA-256 before it is kept.

interface PicoVoice extends EngineVoice {
  files: { name: string; sha256: string }[];
}

/**
 * One of Pico's voices: a language's text analysis file (`<lang>_ta.bin`) and its speaker's
 * signal generation file (`<lang>_<speaker>_sg.bin`), each with its known SHA-256. All are female.
 */
function picoVoice(lang: string, name: string, speaker: string, sha256: { ta: string; sg: string }): PicoVoice {
  return {
    id: lang,
    name,
    languages: [lang],
    gender: "female",
    sourceUrls: ["https://android.googlesource.com/platform/external/svox/"],
    files: [
      { name: `${lang}_ta.bin`, sha256: sha256.ta },
      { name: `${lang}_${speaker}_sg.bin`, sha256: sha256.sg },
    ],
  };
}

export const PICO_VOICES: PicoVoice[] = [
  picoVoice("en-US", "English (US), female", "lh0", { ta: "3a2a4d23de2a44dbbff50f69dcb9486be53b6d0a871d77cdc35f45c3e25e82aa", sg: "d6946526696d9eb085f7b23b1fbdf7a9986caca658b645e9eb73c6514fd4789d" }),
  picoVoice("en-GB", "English (UK), female", "kh0", { ta: "57998f6423236dea25cd572a73b13f371e64155840e31b571eba7fca0b521b7e", sg: "8f9f5d13a920a9f3371517178d42ce89b835f1e587760c2db280beb593c388fa" }),
  picoVoice("de-DE", "German, female", "gl0", { ta: "df292826754713d5efb6c95d60582c17753e95856b4c735c3150db722b2c218a", sg: "39147b816d08bbbe64b23797804cf691a761ab73a7689ca9e2b6f87ace722654" }),
  picoVoice("es-ES", "Spanish, female", "zl0", { ta: "b18c60baf249466bf8785d333d8cb4cf1f6b62e5545986f621c66568f1851961", sg: "82e724d3c788767ec95f0d22b0ab738e677ad397f26ec0bbbf2c07aafdf29000" }),
  picoVoice("fr-FR", "French, female", "nk0", { ta: "d9da5eb3cd7aac7071ab8ff7fee8d716f58572ee5393c1f0a8db946d6bf32f97", sg: "85e2d63cf9f5522ea2a483d25ddd1cb0c6bfeecc39c92884aecfe7d3f179837a" }),
  picoVoice("it-IT", "Italian, female", "cm0", { ta: "9b243c3470660293691d0d4e000901d7c5d0fa71976b33986e92e93a860ade33", sg: "c48be4dc1f5a3c77a3dc4c8a457949b69bc433d674fac4fac91d49c01770e7e4" }),
];

/** Paths of the voice's two resource files, fetching any that are missing when a URL is configured. */
export async function ensureVoiceFiles(voice: PicoVoice, dir: string, baseUrl: string): Promise<string[]> {
  const paths: string[] = [];
  for (const file of voice.files) {
    const path = join(dir, file.name);
    if (!existsSync(path)) {
      if (!baseUrl) throw new Error(`pico voice file ${file.name} is missing from ${dir}`);
      await download(`${baseUrl}/${file.name}`, path, file.sha256);
    }
    paths.push(path);
  }
  return paths;
}

async function download(url: string, path: string, sha256: string): Promise<void> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`fetching ${url} failed: HTTP ${res.status}`);
  const bytes = new Uint8Array(await res.arrayBuffer());
  const got = createHash("sha256").update(bytes).digest("hex");
  if (got !== sha256) throw new Error(`fetched ${url} does not match its known SHA-256`);
  mkdirSync(join(path, ".."), { recursive: true });
  const partial = `${path}.partial`;
  writeFileSync(partial, bytes);
  renameSync(partial, path);
}
