// Production traces as histories: a service's own lock and write spans, read from
// OpenTelemetry's OTLP JSON (otlp-json.ts) and turned into a run's history and
// resource log (to-history.ts), so the checker's rules judge them. The
// conventions the spans follow are docs/traces.md's.
export { readOtlpJson, requestSpans, type RequestSpans, type Span, type AttributeValue } from "./otlp-json.ts";
export { checkSpan, traceHistory, type TraceHistory, type Gaps } from "./to-history.ts";
export { writeTraceRun } from "./run-dir.ts";
export { writeTraceFiles, traceTestName, gapsLine, clockBounds, parseClockError, type TraceRun } from "./files.ts";
