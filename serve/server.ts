// The HTTP face of the store browser: GET and HEAD only, nothing ever written. Run
// files are streamed as they are on disk, with types that keep a browser from
// running anything but a report's own inline script.
import { createReadStream } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { extname } from "node:path";
import { listPage, runPage } from "./pages.ts";
import { resolveTarget } from "./paths.ts";
import { listRuns, listSoakDirs, summarize } from "./store.ts";

// Pages and files may not fetch anything: a report is self-contained by design, and
// a log that a browser somehow took for HTML still runs nothing.
const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'";
const REPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

function contentType(name: string): string {
  switch (extname(name)) {
    case ".html":
      return "text/html; charset=utf-8";
    case ".json":
      return "application/json; charset=utf-8";
    default:
      return "text/plain; charset=utf-8";
  }
}

/** `root`: the store's real path; `shown`: how to name it on the list page. */
export function createServeServer(root: string, shown: string): Server {
  return createServer((req, res) => {
    handle(root, shown, req, res).catch((e: unknown) => {
      process.stderr.write(`serve: ${req.url}: ${(e as Error).stack ?? String(e)}\n`);
      if (!res.headersSent) send(res, req, 500, "text/plain; charset=utf-8", "internal error\n");
      else res.destroy();
    });
  });
}

async function handle(root: string, shown: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.setHeader("Allow", "GET, HEAD");
    return send(res, req, 405, "text/plain; charset=utf-8", "read-only: GET and HEAD only\n");
  }
  const target = await resolveTarget(root, req.url ?? "/");
  if (!target) return send(res, req, 404, "text/plain; charset=utf-8", "not found\n");
  switch (target.kind) {
    case "list":
      return send(res, req, 200, "text/html; charset=utf-8", listPage(shown, await listRuns(root), await listSoakDirs(root)), PAGE_CSP);
    case "run":
      return send(res, req, 200, "text/html; charset=utf-8", runPage(await summarize(root, target.rel)), PAGE_CSP);
    case "redirect":
      res.setHeader("Location", target.location);
      return send(res, req, 301, "text/plain; charset=utf-8", "moved\n");
    case "file": {
      const type = contentType(target.name);
      res.writeHead(200, {
        "Content-Type": type,
        "Content-Security-Policy": type.startsWith("text/html") ? REPORT_CSP : "default-src 'none'",
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": "no-store",
      });
      if (req.method === "HEAD") return void res.end();
      const stream = createReadStream(target.path);
      stream.on("error", () => res.destroy());
      stream.pipe(res);
      return;
    }
  }
}

function send(res: ServerResponse, req: IncomingMessage, status: number, type: string, body: string, csp = "default-src 'none'"): void {
  res.writeHead(status, {
    "Content-Type": type,
    "Content-Length": Buffer.byteLength(body),
    "Content-Security-Policy": csp,
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
  });
  res.end(req.method === "HEAD" ? undefined : body);
}
