// Shopify's Toxiproxy itself, beside fencecheck's own fault proxy (proxy/):
// built from its Go module at a pinned version into the user's cache, and run on
// a port of our own for `--toxiproxy auto`, the conformance tests that hold our
// server to its behaviour, and the proxy benchmark.
export { TOXIPROXY_VERSION, SETUP_COMMAND, toxiproxyBinary, toxiproxyBuilt, goProblem, buildToxiproxy } from "./build.ts";
export { startToxiproxy, type RunningToxiproxy, type ToxiproxyStart } from "./start.ts";
