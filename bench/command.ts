// The process around a checkout script (bench:checker, bench:run-cost, torture):
// its options parsed, bad ones said in one line with exit 254,
// the figures printed with exit 0, and a bench that could not run exit 255.
import { BadInput, EXIT } from "../lib/index.ts";

/** `parse` returns null for --help (already printed); `run` prints the figures, and may return an exit code of its own (0 otherwise). */
export function benchCommand<O>(name: string, parse: (argv: string[]) => O | null, run: (o: O) => Promise<number | void>): void {
  const main = async (): Promise<number> => {
    let o: O | null;
    try {
      o = parse(process.argv.slice(2));
    } catch (err) {
      if (!(err instanceof BadInput)) throw err;
      console.error(`${name}: ${err.message}`);
      return EXIT.badInput;
    }
    return o === null ? EXIT.valid : ((await run(o)) ?? EXIT.valid);
  };
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      console.error(`${name} failed: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = EXIT.crash;
    },
  );
}
