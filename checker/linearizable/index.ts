// The model check of the lock service: every key's lock operations searched for an
// order a fenced mutex allows (Wing and Gong's search with memoisation, in a time
// budget). `checkModel` gives a witness per key that has none, and figures.
export { checkModel, DEFAULT_BUDGET_MS, MODEL_NAME, type ModelCheck, type ModelCheckStats } from "./check.ts";
export { search, type SearchHistory, type SearchModel, type SearchResult } from "./wgl.ts";
