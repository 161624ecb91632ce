// `fencecheck traces --listen PORT`: the live trace check (traces/live) until
// SIGINT or SIGTERM, then the verdict of everything it was sent, as the exit code.
import { BadInput, exitCodeFor, type OptionSpec, type ParsedOptions } from "../lib/index.ts";
import { gapsLine, parseClockError } from "../traces/index.ts";
import { startLive } from "../traces/live/index.ts";

export const LIVE_OPTIONS: readonly OptionSpec[] = [
  { name: "listen", kind: "int", default: undefined, min: 1, max: 65535, defaultText: "off", help: "receive OTLP over HTTP on 127.0.0.1:PORT (POST /v1/traces) and check spans as they arrive, instead of reading files; the run goes in STORE/traces-live-<PORT>/<timestamp>, continued if it was not closed" },
  { name: "window", kind: "number", default: 30, min: 0.001, help: "with --listen: seconds a key's spans wait, past the latest span end seen, before their holds are checked; a span that starts before its key's last cut is late (spooled, not checked live)" },
  { name: "max-body", kind: "number", default: 16, min: 0.001, help: "with --listen: largest request body, in MiB, before and after gzip (413 above it)" },
];

export async function listen(o: ParsedOptions, files: string[], command: string[]): Promise<number> {
  if (files.length > 0) throw new BadInput(`--listen takes no trace files (given ${files.join(", ")}): check files without --listen`);
  // HOST=MS may name hosts that have not sent yet: every name is taken.
  const clocks = parseClockError((o["clock-error"] as string | undefined) ?? "0", null);
  const say = (line: string) => process.stdout.write(line + "\n");
  const live = await startLive({
    port: o.listen as number,
    store: o.store as string,
    windowS: o.window as number,
    maxBodyBytes: Math.round((o["max-body"] as number) * 1024 * 1024),
    command,
    say,
    clocks,
  });
  const signal = await new Promise<string>((resolve) => {
    process.once("SIGINT", () => resolve("SIGINT"));
    process.once("SIGTERM", () => resolve("SIGTERM"));
  });
  say(`${signal}: no more requests (503); settling every window`);
  const { results, gaps, spans } = await live.close();
  const live_ = results.stats.live as { spans_checked: number; spans_late: number; windows_checked: number };
  const counts = results.stats.anomaly_counts as Record<string, number>;
  const verdict = results.valid === true ? "VALID" : results.valid === false ? "INVALID" : "UNKNOWN";
  say(`${verdict}  live traces on port ${live.port}: ${spans} spans accepted and spooled, ${live_.spans_checked} checked in ${live_.windows_checked} window(s), ${live_.spans_late} late (not checked live)`);
  for (const t of results.anomaly_types) say(`  ${t} ×${counts[t]}`);
  for (const t of results.possible?.anomaly_types ?? []) say(`  possible ${t} ×${results.possible!.anomaly_counts[t]} (only if the clocks were off the right way)`);
  if (clocks.byHost.size || clocks.default_ms) say(`  clocks: ${[...clocks.byHost].map(([h, ms]) => `${h} ±${ms} ms`).concat(`the rest ±${clocks.default_ms} ms`).join(", ")}`);
  for (const r of results.stats.unknown_reasons as string[]) say(`  cannot fully check: ${r}`);
  say(gapsLine(spans, gaps));
  say(`Run directory: ${live.runDir} (fencecheck traces ${live.runDir}/spans.json re-checks it offline)`);
  return exitCodeFor(results.valid);
}
