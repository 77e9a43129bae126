import { expect, test } from "bun:test";
import { dtmfTones } from "../src/audio/dtmf-tones.ts";
import { heardDigits } from "./fakes/dtmf-ear.ts";
import { toPhoneAudio } from "./fakes/phone-caller.ts";
import { speak } from "./helpers/speech.ts";

// The tones a phone call plays for the application's sendDigits, heard by a Goertzel receiver
// written from ITU-T Q.23 (test/fakes/dtmf-ear.ts), not from the generator.

test("every key of the keypad is heard as itself, once, in order; `w` is a half-second pause", () => {
  const keys = "0123456789*#ABCD";
  const tones = dtmfTones(keys);
  expect(tones.length % 160).toBe(0);
  expect(heardDigits(tones).digits).toBe(keys);
  expect(heardDigits(dtmfTones("abcd")).digits).toBe("ABCD");

  const paused = heardDigits(dtmfTones("1w2"));
  expect(paused.digits).toBe("12");
  // 100 ms of gap after "1" and 500 ms of pause: at least 14 silent 40 ms blocks between the tones.
  const between = paused.runs.slice(
    paused.runs.findIndex((r) => r.key === "1") + 1,
    paused.runs.findIndex((r) => r.key === "2"),
  );
  expect(between.reduce((n, r) => n + r.blocks, 0)).toBeGreaterThanOrEqual(14);
});

test("speech is not taken for digits", () => {
  expect(heardDigits(toPhoneAudio(speak("Thank you very much for calling. Press one for sales."))).digits).toBe("");
});
