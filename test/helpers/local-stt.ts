import { availability } from "../../src/providers/local-pocketsphinx/decoder.ts";

// Tests of the local recognizer need Debian's libpocketsphinx3 and pocketsphinx-en-us. In CI
// (REQUIRE_LOCAL_STT=1, set by .ci/run, which installs them) their absence is a failure;
// elsewhere those tests skip with a printed reason.

const status = availability(process.env.POCKETSPHINX_MODEL_DIR);
export const localSttAvailable = status.ok;
if (!status.ok) {
  if (process.env.REQUIRE_LOCAL_STT === "1") throw new Error(`the local recognizer is required (REQUIRE_LOCAL_STT=1): ${status.reason}`);
  console.warn(`skipping local STT tests: ${status.reason}`);
}
