/** The default of an exhaustive switch: a variant added to a union fails typecheck until it is handled. */
export function unreachable(value: never, what: string): never {
  throw new Error(`unhandled ${what}: ${JSON.stringify(value)}`);
}
