import { parseArgs } from "node:util";
import { loadConfig } from "../config.ts";
import { type Database, openDatabase } from "../db/open.ts";
import { Ledger } from "../ledger/ledger.ts";
import { CLI, type Command, type CommandContext, COMMANDS as DATABASE_COMMANDS } from "./commands.ts";
import { EXIT, NotFoundError, UsageError } from "./errors.ts";
import { LIMITS_COMMANDS } from "./limits-commands.ts";
import { tlsSelfSigned } from "./tls-command.ts";

const COMMANDS: Command[] = [...DATABASE_COMMANDS, ...LIMITS_COMMANDS, tlsSelfSigned];

const HELP_FLAGS = new Set(["--help", "-h"]);
const print = (line: string) => console.log(line);
const printError = (line: string) => console.error(line);

const USAGE_WIDTH = 48;
const usageLine = (c: Command) => {
  const line = `${c.name} ${c.synopsis}`;
  return line.length < USAGE_WIDTH ? `  ${line.padEnd(USAGE_WIDTH)} ${c.summary}` : `  ${line}\n  ${" ".repeat(USAGE_WIDTH)} ${c.summary}`;
};

function overview(commands: Command[] = COMMANDS): string {
  return [
    `usage: ${CLI} <command> [flags]       (--help after any command for its own help)`,
    ...commands.map(usageLine),
    "",
    "Amounts are in USD and credits (1 USD = 1,000,000 credits); --usd takes at most 1,000,000.",
    "The database is DATABASE_URL's (default the embedded SQLite file).",
    "Exit codes: 0 done, 1 failed, 2 wrong command line, 3 not found.",
  ].join("\n");
}

const commandHelp = (c: Command) => [`usage: ${CLI} ${c.name} ${c.synopsis}`, "", `${c.summary}.`, ...(c.details ? [c.details] : [])].join("\n");

/** The command the leading words name (`keys create`, `balance`), and the words after it. */
function commandOf(argv: string[]): { command?: Command; rest: string[] } {
  for (const words of [2, 1]) {
    const command = COMMANDS.find((c) => c.name === argv.slice(0, words).join(" "));
    if (command) return { command, rest: argv.slice(words) };
  }
  return { rest: argv };
}

/**
 * Runs one operator command and returns its exit code. Help is printed without opening the
 * database; the command line is checked before anything is written.
 */
export async function runCli(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  const { command, rest } = commandOf(argv[0] === "help" ? argv.slice(1) : argv);
  const wantsHelp = argv[0] === "help" || rest.some((a) => HELP_FLAGS.has(a)) || argv.length === 0;
  if (!command) {
    const group = COMMANDS.filter((c) => c.name.startsWith(`${rest[0]} `));
    if (wantsHelp && (rest.length === 0 || HELP_FLAGS.has(rest[0]!) || group.length)) {
      print(overview(group.length ? group : COMMANDS));
      return EXIT.ok;
    }
    printError(
      `unknown command "${rest
        .filter((a) => !a.startsWith("-"))
        .slice(0, 2)
        .join(" ")}"`,
    );
    printError(overview(group.length ? group : COMMANDS));
    return EXIT.usage;
  }
  if (wantsHelp) {
    print(commandHelp(command));
    return EXIT.ok;
  }

  let values: Record<string, string | string[] | boolean | undefined>;
  try {
    values = parseArgs({ args: rest, options: command.options, allowPositionals: false, strict: true }).values;
  } catch (err) {
    printError((err as Error).message);
    printError(commandHelp(command));
    return EXIT.usage;
  }

  let database: Database | undefined;
  try {
    if (command.offline) await command.run({ print } as CommandContext, values);
    else {
      const config = loadConfig(env);
      database = await openDatabase(config.databaseUrl);
      await command.run({ database, ledger: new Ledger(database), newTenantLimits: config.defaultTenantLimits, print }, values);
    }
    return EXIT.ok;
  } catch (err) {
    if (err instanceof UsageError) {
      printError(err.message);
      printError(commandHelp(command));
      return EXIT.usage;
    }
    if (err instanceof NotFoundError) {
      printError(err.message);
      return EXIT.notFound;
    }
    printError(`failed: ${(err as Error).message}`);
    return EXIT.failed;
  } finally {
    await database?.close();
  }
}
