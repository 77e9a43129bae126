import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

// `bun install` blocks every dependency's install script that package.json does not trust; the
// README says which it blocks and why nothing needs them. This keeps that list true.

const ROOT = resolve(import.meta.dir, "..");

test("every postinstall bun install blocks is named in the README, with their count", () => {
  const run = Bun.spawnSync(["bun", "pm", "untrusted"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  expect(run.exitCode).toBe(0);
  const blocked = [...run.stdout.toString().matchAll(/^\.\/node_modules\/(\S+) @/gm)].map((m) => m[1]!.split("/node_modules/").at(-1)!);
  expect(blocked.length).toBeGreaterThan(0);
  const readme = readFileSync(resolve(ROOT, "README.md"), "utf8");
  expect(readme).toContain(`"Blocked ${blocked.length} postinstalls"`);
  for (const name of new Set(blocked)) expect(readme).toContain(`\`${name}\``);
});
