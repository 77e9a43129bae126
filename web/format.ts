// How amounts and times read on the pages. 1 credit = 0.000001 USD.

// Whole cents as such, sub-cent amounts to the micro-dollar (a credit): nothing is rounded away.
export const usd = (value: number): string => `$${value.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 6 })}`;

export const credits = (value: number): string => `${value.toLocaleString("en-US")} credits`;

export const when = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "short" }) : "—");

export const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
