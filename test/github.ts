// A step of a GitHub Actions workflow or composite action, as the tests that read
// .github/workflows/nightly-soak.yml and action.yml see one.
export interface Step {
  name?: string;
  id?: string;
  uses?: string;
  run?: string;
  if?: string;
  shell?: string;
  env?: Record<string, string>;
  with?: Record<string, unknown>;
}
