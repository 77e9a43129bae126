// `bun run build` step: Pico's lingware (Apache-2.0, not in any npm package) is copied into
// dist/pico-voices for the executable to embed, from PICO_VOICES_DIR or the shared models beside
// the checkout. Without them the executable is built all the same and finds its voices as a
// checkout does (PICO_VOICES_DIR, PICO_VOICES_URL).
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EMBEDDED_PICO_DIR } from "../src/providers/local-pico/embedded.ts";

const source = [process.env.PICO_VOICES_DIR, new URL("../../shared/models/svox-pico-lang", import.meta.url).pathname].find((d) => d && existsSync(d));
const target = new URL(`../${EMBEDDED_PICO_DIR}`, import.meta.url).pathname;
rmSync(target, { recursive: true, force: true });
mkdirSync(target, { recursive: true });
const files = source ? readdirSync(source).filter((f) => f.endsWith(".bin") || f === "LICENSE") : [];
for (const f of files) copyFileSync(join(source!, f), join(target, f));
// An asset directory must not be empty: a note says why it is.
writeFileSync(join(target, "README"), source ? `Pico's lingware from ${source}, embedded by bun run build.\n` : "No Pico lingware was found at build time.\n");
console.log(source ? `embedding ${files.length} Pico files from ${source}` : "no Pico lingware found (PICO_VOICES_DIR): the executable will look for it at run time");
