import { ApiError } from "../../errors.ts";

/** The one answer when a file's duration cannot be measured from its audio: never a guess. */
export const indeterminate = (why: string) => new ApiError("indeterminate_audio_duration", `the audio's duration cannot be determined: ${why}`);
