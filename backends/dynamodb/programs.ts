// dynalite, DynamoDB's API on LevelDB, is an npm package fencecheck depends on
// (optionally: its LevelDB binding is native) and runs with the Node that runs
// fencecheck; it has no container image.
import type { ServerProgram } from "../../cluster/deployment.ts";
import { nodeBinary } from "../../cluster/programs.ts";
import { resolvable, type Requirement } from "../../setup/requirements.ts";

export const DYNALITE_SERVER: ServerProgram = { name: "dynalite", local: nodeBinary };

export const DYNALITE: Requirement = {
  id: "dynalite",
  serves: "--backend dynamodb and --resource dynamodb",
  packages: [],
  present: () => resolvable("dynalite/cli.js"),
  getIt: "it is an optional npm dependency of fencecheck: run `npm install` where fencecheck is installed, without --omit=optional",
};
