import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// `redocly lint` with the project's redocly.yaml, run as a process (it is a CLI) and offline, its
// telemetry off.

const ROOT = new URL("../..", import.meta.url).pathname;
const REDOCLY = join(ROOT, "node_modules/@redocly/cli/bin/cli.js");

export interface Problem {
  ruleId: string;
  severity: "error" | "warn";
  message: string;
  location: { pointer: string }[];
}

/** Redocly's problems with a document (OpenAPI or AsyncAPI, told apart by its first member). */
export async function lint(doc: unknown): Promise<Problem[]> {
  const dir = mkdtempSync(join(tmpdir(), "voxroute-lint-"));
  try {
    const file = join(dir, "document.json");
    writeFileSync(file, JSON.stringify(doc));
    const run = Bun.spawn([process.execPath, REDOCLY, "lint", file, "--config", join(ROOT, "redocly.yaml"), "--format", "json"], {
      cwd: ROOT,
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
    const report = JSON.parse(out.slice(out.indexOf("{"))) as { problems?: Problem[] };
    if (!report.problems) throw new Error(`redocly gave no report: ${err}`);
    return report.problems;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The problems as lines, for a readable failure. */
export const problemLines = (problems: Problem[]) => problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
