// Operator command line: `bun run cli --help` (the single executable: `voxroute --help`) lists the commands (src/cli/commands.ts).
import { runCli } from "./cli/run.ts";

process.exitCode = await runCli(process.argv.slice(2), process.env);
