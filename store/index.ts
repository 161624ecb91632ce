// The run store: the shapes of a run directory's files, the run's clock, the
// writer that records a history as a run goes, and the readers that turn a
// stored history and resource log into checked values.
export * from "./events.ts";
export * from "./clock.ts";
export { readHistory, readResourceLog, type HistoryFile, type ResourceLog } from "./reader.ts";
export { HistoryWriter } from "./writer.ts";
export { createRunDir, writeJson, runStamp, type RunDir } from "./run-dir.ts";
export * from "./process-map.ts";
export { appendProtocolError, readProtocolErrors, type ProtocolError, type ProtocolErrorCode } from "./protocol-errors.ts";
