// The baseline for bench/http.ts: a bare Elysia route in its own process, so
// the figures show what zkagent costs on top of the framework on this machine.
import { Elysia } from "elysia";

const port = Number(process.env.PORT ?? 3000);
new Elysia().get("/", () => "ok").listen({ port, hostname: "127.0.0.1", reusePort: process.env.REUSE_PORT === "1" });
