// A real OpenTelemetry Collector for fencecheck's traces: built from its Go
// modules (module/, every collector module at one release) into the cache by
// `fencecheck setup --extras otelcol`, and run on a port of our own with the
// OTLP receiver and the file and OTLP/HTTP exporters, between the SDK and
// `fencecheck traces` (`fencecheck test --otel`, the library tests).
export { OTELCOL_VERSION, OTELCOL_SETUP, otelcolBinary, otelcolBuilt, otelcolGoProblem, buildCollector, type CollectorBuild } from "./build.ts";
export { startCollector, collectorConfig, type CollectorStart, type RunningCollector } from "./start.ts";
