import { probeDuration } from "../../src/audio/probe.ts";

// What the cloning fakes share: the recordings they refuse, as the providers do (empty, not audio
// in a container they read, too short to hear a speaker in), each fake in its own error shape; and
// how long a clone takes under the "slow" fault.

/** Faults every cloning fake takes: "slow" answers a clone after SLOW_CLONE_MS. */
export type CloningFault = "slow";

/** A clone answered after this long, under the "slow" fault. */
export const SLOW_CLONE_MS = 600;

/** Shorter than this, a recording is refused (the providers ask for seconds of speech; one is the fakes' floor). */
export const MIN_CLONE_SECONDS = 1;

/** Why a recording cannot be cloned from; undefined when it can. */
export function cloneAudioProblem(name: string, bytes: Uint8Array): string | undefined {
  if (!bytes.byteLength) return `${name} is empty`;
  let seconds: number;
  try {
    seconds = probeDuration(bytes).seconds;
  } catch {
    return `${name} is not an audio file that could be read`;
  }
  if (seconds < MIN_CLONE_SECONDS) return `${name} holds ${seconds.toFixed(2)} s of audio; at least ${MIN_CLONE_SECONDS} s of speech is needed`;
}
