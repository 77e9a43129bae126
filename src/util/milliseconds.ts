/** Seconds to the millisecond, as times leave the router: `0.4`, not float noise such as `0.39980000000000004`. */
export const toMillisecond = (seconds: number): number => Math.round(seconds * 1000) / 1000;
