// What the CLI's exit codes mean (docs/account.md#operator-cli): 0 done, 1 failed (the database
// or something unexpected), 2 the command line is wrong, 3 what it names does not exist.

export const EXIT = { ok: 0, failed: 1, usage: 2, notFound: 3 } as const;

/** The command line is wrong: the message, then the command's usage, on stderr; exit 2. */
export class UsageError extends Error {}

/** A tenant or key the command names does not exist; exit 3. */
export class NotFoundError extends Error {}
