// The verdict's second thread: given a paired history's view (shared-paired.ts), it checks
// the holds' spans (mutex.ts) and, when asked, runs the model check (linearizable/)
// while the checking thread does every other analysis, and posts its findings back.
import { parentPort } from "node:worker_threads";
import { checkModel } from "./linearizable/index.ts";
import { checkHolds } from "./mutex.ts";
import type { VerdictRequest } from "./analyze.ts";
import { pairedOf } from "./shared-paired.ts";

parentPort!.once("message", ({ view, budgetMs, modelCheck }: VerdictRequest) => {
  const m = pairedOf(view);
  const holds = checkHolds(m);
  const model = modelCheck ? checkModel(m, budgetMs, view.lock ?? undefined) : null;
  parentPort!.postMessage({ holds, model });
});
