// The compiled executable's entry (`bun run build`): with no arguments it is the server
// (src/main.ts), with arguments the operator CLI (src/cli.ts: `voxroute keys create --tenant NAME`).
if (process.argv.length > 2) await import("./cli.ts");
else await import("./main.ts");
export {};
