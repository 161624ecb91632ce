// The verdict's second thread: given a model's view (shared-model.ts), it checks
// the holds' spans (mutex.ts) and runs the model check (linearizable/) while the
// checking thread does every other analysis, and posts both findings back.
import { parentPort } from "node:worker_threads";
import { checkModel } from "./linearizable/index.ts";
import { checkHolds } from "./mutex.ts";
import { modelOf, type ModelView } from "./shared-model.ts";

parentPort!.once("message", ({ view, budgetMs }: { view: ModelView; budgetMs?: number }) => {
  const m = modelOf(view);
  const holds = checkHolds(m);
  const model = checkModel(m, budgetMs);
  parentPort!.postMessage({ holds, model });
});
