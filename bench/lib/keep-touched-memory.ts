// Imported first by an in-process bench: it runs on the allocator setting the server gives itself.
import { keepTouchedMemory } from "../../src/touched-memory.ts";

keepTouchedMemory();
