// How a CLI entry point ends, for the full CLI (index.ts) and the agent's
// (agent.ts) alike: its status, or for a thrown error the exit code that
// says which kind — 2 usage, 3 a service out of reach (its URL named), 1
// anything else — after standard output has been taken by its reader.
import { ConfigError } from "../config";
import { inCliTerms, outputWritten, shown, UsageError, warn } from "./args";
import { EXIT_UNREACHABLE, unreachable } from "./unreachable";

// process.exit does not wait for a pipe to take what was written: a --json
// object larger than the pipe's 64 KiB was cut (src/cli/args.ts, outputWritten).
const exit = async (code: number) => {
  await outputWritten();
  process.exit(code);
};

export function runCli(main: (argv: string[]) => Promise<number>): void {
  main(process.argv.slice(2)).then(exit, (error) => {
    if (error instanceof UsageError || error instanceof ConfigError) {
      warn(`zkagent: ${shown(error.message)}\n(zkagent --help for usage)`);
      return exit(2);
    }
    // A service that could not be reached (demo's server, a circuit or members download): its URL and exit 3.
    const down = unreachable(error);
    if (down) {
      warn(`zkagent: ${shown(down.message)}`);
      return exit(EXIT_UNREACHABLE);
    }
    warn(`zkagent: ${shown(inCliTerms(error instanceof Error ? error.message : String(error)))}`);
    return exit(1);
  });
}
