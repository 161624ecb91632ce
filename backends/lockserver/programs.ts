// Our lock server is a Node program of this package (main.ts), run with the Node
// that runs fencecheck; it has no container image.
import type { ServerProgram } from "../../cluster/deployment.ts";
import { nodeBinary } from "../../cluster/programs.ts";

export const LOCK_SERVER: ServerProgram = { name: "lockserver", local: nodeBinary };
