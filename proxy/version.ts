// What our server's GET /version answers, apart from the server so that a run
// can record it (run.json's fault_proxy) without loading the server's code.
export const PROXY_VERSION = "fencecheck-proxy 0.1.0 (Toxiproxy 2.x API)";
