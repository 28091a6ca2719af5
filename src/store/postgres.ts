// The multi-node store: PostgreSQL through Bun's built-in SQL client (one pool:
// connection/postgres.ts), each aggregate's SQL in its folder, composed into
// one Store.
import { mapUnreachable, openPostgresSql, type PostgresOptions } from "./connection/postgres";
import { DEFAULT_ROOT_DURATION_MS } from "../groups/roots";
import type { Store } from "./interface";
import { postgresAgents } from "./agents/postgres";
import { postgresBudgets } from "./budgets/postgres";
import { postgresAudit } from "./audit/postgres";
import { postgresChallenges } from "./challenges/postgres";
import { postgresCircuits } from "./circuits/postgres";
import { postgresDecisions } from "./decisions/postgres";
import { postgresGroups } from "./groups/postgres";
import { postgresIdempotency } from "./idempotency/postgres";
import { postgresKeys } from "./keys/postgres";
import { postgresSigningKeys } from "./signing-keys/postgres";
import { postgresWebhooks } from "./webhooks/postgres";

export { DEFAULT_POOL_SIZE, isConnectionFailure, type PostgresOptions, USAGE_SHARDS } from "./connection/postgres";

export type PostgresStore = Store & { readonly kind: "postgres" };

export async function openPostgres(url: string, options: PostgresOptions = {}): Promise<PostgresStore> {
  const sql = await openPostgresSql(url, options);
  const rootDurationMs = options.groupRootDurationMs ?? DEFAULT_ROOT_DURATION_MS;
  const { drain, ...challenges } = postgresChallenges(sql);
  return {
    kind: "postgres",
    ...postgresKeys(sql),
    ...postgresAgents(sql),
    ...challenges,
    ...postgresDecisions(sql, rootDurationMs),
    ...postgresAudit(sql),
    ...postgresSigningKeys(sql),
    ...postgresCircuits(sql),
    ...postgresIdempotency(sql),
    ...postgresGroups(sql, rootDurationMs),
    ...postgresBudgets(sql),
    ...postgresWebhooks(sql),
    ...mapUnreachable({
      async ping(): Promise<void> {
        await sql`SELECT 1`;
      },
    }),

    async close(): Promise<void> {
      // Creations already accepted are written, not dropped.
      await drain();
      // Let queries already sent finish, but never hang a shutdown on them.
      await sql.close({ timeout: 5 });
    },
  };
}
