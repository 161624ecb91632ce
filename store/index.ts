// The run store: the shapes of a run directory's files, the run's clock, and the
// readers that turn a stored history and resource log into checked values.
export * from "./events.ts";
export * from "./clock.ts";
export { readHistory, readResourceLog, type HistoryFile, type ResourceLog } from "./reader.ts";
