import { afterAll } from "bun:test";
import { removeTempDirs } from "./helpers/temp-dirs.ts";

// Loaded before the test files (bunfig.toml); its afterAll runs once, after the last of them.
afterAll(removeTempDirs);
