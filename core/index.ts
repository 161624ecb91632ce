// The model every part shares, as types: a test as plain data composed from its
// parts (test-definition.ts), what a backend declares of itself (backend.ts), and
// what a row of the failure catalogue is (scenario.ts). It holds no backend:
// those live in backends/NAME/ and are listed in backends/index.ts.
export type { Test } from "./test-definition.ts";
export {
  removedOnce,
  type Backend,
  type BackendContext,
  type BackendOption,
  type BackendOptions,
  type ClientKind,
  type DeployName,
  type ExternalService,
  type ExternalServiceContext,
  type OpenService,
  type OptionNeed,
  type OptionRule,
  type OptionsInPlay,
  type ResourceStore,
  type RunOnService,
  type ServerOptions,
  type VersionProbe,
} from "./backend.ts";
export { FREE_OPTIONS, FROZEN_PAST_LEASE, ONE_HOLD_EACH, staleUnlessFenced, matches, type Prediction, type Scenario } from "./scenario.ts";
