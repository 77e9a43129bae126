// Files of this repository that the server reads or starts at run time (worker scripts,
// migrations), named from its root. In the compiled executable (`bun run build`) the modules of its
// main program all have the executable's own import.meta.url, at the root of its embedded files,
// where the build embeds these files under the same relative paths (a worker thread's modules have
// their worker's URL instead: these files are named from the main thread).
const root = new URL(Bun.isStandaloneExecutable ? "./" : "../", import.meta.url);

export const projectFile = (path: string): URL => new URL(path, root);
