import type { Config } from "../config";
import { startServer } from "../main";
import { parse, say } from "./args";

export const serveHelp = `zkagent serve
  Runs the HTTP service. Environment:
    PORT                 port (default 3000)
    HOST                 address to bind (default 0.0.0.0)
    DATABASE_URL         SQLite file (default ./data/zkagent.db) or postgres://user:pass@host/db
    SQLITE_SYNCHRONOUS   NORMAL (default: survives a process crash) or FULL (also power loss)
    LOG_LEVEL            debug | info | warn | error | silent (default info)
    DEFAULT_RATE_LIMIT   challenges per minute for new keys (default 1000; 0 = unlimited)
  On the first start of an empty database it creates and prints an API key.
  Swagger UI: http://localhost:PORT/swagger`;

export async function serveCommand(argv: string[], config: Config): Promise<number> {
  const { values } = parse(argv, {});
  if (values.help) return say(serveHelp), 0;
  const server = await startServer(config);
  await new Promise<void>((resolve) => {
    const shutdown = () => void server.stop().then(resolve);
    process.once("SIGTERM", shutdown);
    process.once("SIGINT", shutdown);
  });
  return 0;
}
