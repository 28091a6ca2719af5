import { t } from "elysia";

const check = t.Union([t.Literal("ok"), t.Literal("fail")]);
const checks = t.Object({ database: check, verifier: check, draining: check }, { additionalProperties: false });

export const healthResponse = t.Object({ status: t.Literal("ok") }, { additionalProperties: false });

export const readyResponse = t.Object({ status: t.Literal("ready"), checks }, { additionalProperties: false });

export const notReadyResponse = t.Object(
  {
    status: t.Literal("not_ready"),
    failing: t.Union([t.Literal("database"), t.Literal("verifier"), t.Literal("draining")], { description: "The first failing check" }),
    checks,
  },
  { additionalProperties: false },
);
