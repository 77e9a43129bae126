import { ProviderError } from "../errors.ts";

/**
 * Bounds how long a provider may take to accept a session. On time-out the attempt fails with a
 * retryable ProviderError, and whatever the provider hands over later is released, never leaked.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, message: string, release: (late: T) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new ProviderError(message, true));
      promise.then(release, () => {});
    }, ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
