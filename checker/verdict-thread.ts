// The verdict's second thread: given a model's view (shared-model.ts), it checks
// the holds' spans (mutex.ts) and, when asked, runs the model check (linearizable/)
// while the checking thread does every other analysis, and posts its findings back.
import { parentPort } from "node:worker_threads";
import { checkModel } from "./linearizable/index.ts";
import { checkHolds } from "./mutex.ts";
import type { VerdictRequest } from "./analyze.ts";
import { modelOf } from "./shared-model.ts";

parentPort!.once("message", ({ view, budgetMs, modelCheck }: VerdictRequest) => {
  const m = modelOf(view);
  const holds = checkHolds(m);
  const model = modelCheck ? checkModel(m, budgetMs, view.lock ?? undefined) : null;
  parentPort!.postMessage({ holds, model });
});
