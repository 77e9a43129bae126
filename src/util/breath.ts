/**
 * Lets the event loop serve what waits (requests, sessions' frames) before a long piece of
 * background work goes on: awaited between its chunks, it bounds how long the loop is held.
 */
export const breath = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
