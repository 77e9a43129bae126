// Operator command line: `bun run cli --help` lists the commands (src/cli/commands.ts).
import { runCli } from "./cli/run.ts";

process.exitCode = await runCli(process.argv.slice(2));
