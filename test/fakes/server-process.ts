// A voxroute server process for tests that need real processes (two instances, kill -9): the
// production server with the in-process test providers added. Prints `{"url": …}` once listening.
// With SCRIPTED_PLAN (JSON: provider id → its sessions' scripts), the scripted providers of
// fakes/scripted-tts.ts ("tts-one", "tts-two") and fakes/scripted-stt.ts ("stt-one", "stt-two") too.
import { loadConfig } from "../../src/config.ts";
import { startServer } from "../../src/server.ts";
import { FixedPcmProvider, testCatalogue } from "./fixed-pcm-provider.ts";

const plan = process.env.SCRIPTED_PLAN ? (JSON.parse(process.env.SCRIPTED_PLAN) as Record<string, never[]>) : undefined;
// Loaded only with a plan: the scripted fakes bring the test speech helpers, whose Flite keeps a
// temporary folder of its own, which a process under test for its temporary files must not have.
const scripted = plan ? { tts: await import("./scripted-tts.ts"), stt: await import("./scripted-stt.ts") } : undefined;
const tts = scripted ? ["tts-one", "tts-two"].map((id) => new scripted.tts.ScriptedTts(id)) : [];
const stt = scripted ? ["stt-one", "stt-two"].map((id) => new scripted.stt.ScriptedStt(id)) : [];
for (const p of [...tts, ...stt]) p.plan.push(...(plan?.[p.id] ?? []));
const catalogue = testCatalogue(["fixed", ...tts.map((p) => p.id)]);
if (scripted) catalogue.providers.push(...scripted.stt.scriptedSttCatalogue(stt.map((p) => p.id)).providers);
// The first of each kind is dearer (20 credits a character, a second), so that each part shows its own price.
for (const [id, price] of [
  ["tts-one", { amount: "0.00002", per: "character" }],
  ["stt-one", { amount: "0.0012", per: "minute" }],
] as const) {
  const binding = catalogue.providers.find((p) => p.id === id)?.bindings[0];
  if (binding) binding.price = price;
}

const server = await startServer(loadConfig(process.env), {
  extra: { catalogue, providers: [new FixedPcmProvider("fixed", Number(process.env.FIXED_CHUNKS ?? 2)), ...tts], sttProviders: stt },
});
console.log(JSON.stringify({ url: server.url }));
process.on("SIGTERM", async () => {
  await server.stop(0);
  process.exit(0);
});
