// Bun's native allocator (mimalloc) gives the pages it freed back to the system a few milliseconds
// later, and the next burst faults them in again. On a virtual machine a page fault costs
// microseconds: with 200 utterances in one instant they were half of a plain relay's CPU (about 70
// faults per utterance; README, performance). The server keeps the memory it has touched instead:
// unless the operator set MIMALLOC_PURGE_DELAY (docs/operations.md#memory), the process replaces
// itself once, before it loads anything else, with that at -1 (exec: the same PID, stdio and
// arguments). Its resident memory then stays at its peak; mimalloc still reuses what is freed.
export function keepTouchedMemory(): void {
  if (process.env.MIMALLOC_PURGE_DELAY !== undefined || process.platform === "win32") return;
  // In the compiled binary argv[1] is its own path inside the executable, not an argument.
  const compiled = import.meta.path.startsWith("/$bunfs/");
  const args = compiled ? process.argv.slice(2) : [...process.execArgv, ...process.argv.slice(1)];
  process.execve?.(process.execPath, [process.execPath, ...args], { ...process.env, MIMALLOC_PURGE_DELAY: "-1" });
}
