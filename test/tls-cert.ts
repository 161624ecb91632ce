// A self-signed certificate made for one test (openssl), for TLS servers that
// stand in for a real service's: its files, and the key and certificate read.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { tempRunDir } from "./helpers.ts";

export interface TestCert {
  key: Buffer;
  cert: Buffer;
  /** For NODE_EXTRA_CA_CERTS, or a client's `ca`. */
  certFile: string;
}

/** For the names of `altNames` (openssl's subjectAltName: "DNS:localhost,IP:127.0.0.1"), valid for a day. */
export function selfSignedCert(altNames: string): TestCert {
  const d = tempRunDir("fc-tls-");
  const [keyFile, certFile] = [join(d, "key.pem"), join(d, "cert.pem")];
  execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", keyFile, "-out", certFile, "-days", "1", "-subj", "/CN=fencecheck-test", "-addext", `subjectAltName=${altNames}`], { stdio: "ignore" });
  return { key: readFileSync(keyFile), cert: readFileSync(certFile), certFile };
}
