// The API client's types (src/merchant/client.ts, written out so that the
// package carries no schema library) held to the service's own schemas, both
// ways: a field added, renamed or retyped on either side fails types.test.ts.
// So is what the guard reads of a budget spend's verdict (modes/budget.ts)
// and hands the handler (BudgetSession).
import type { Agent, BudgetSession, Enrolment, EnrolmentRequest, Group, GroupTree, Mandate, MandateRecord } from "zkagent/merchant";
import type { agentResponse } from "../../../src/modules/agents/model";
import type { enrolmentRequest, enrolmentResponse } from "../../../src/modules/budgets/model";
import type { groupResponse, groupTreeResponse } from "../../../src/modules/groups/model";
import type { mandateResponse } from "../../../src/modules/mandates/model";
import type { proofResponse } from "../../../src/modules/proofs/model";
import type { statusResponse } from "../../../src/modules/status/model";
import type { Mandate as ServiceMandate } from "../../../src/mandates/schema";

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const agree = <T extends true>(value: T) => value;

export const agent = agree<Same<Agent, typeof agentResponse.static>>(true);
export const mandateRecord = agree<Same<MandateRecord, typeof mandateResponse.static>>(true);
export const group = agree<Same<Group, typeof groupResponse.static>>(true);
export const tree = agree<Same<GroupTree, typeof groupTreeResponse.static>>(true);
export const mandate = agree<Same<Mandate, ServiceMandate>>(true);
export const enrolment = agree<Same<Enrolment, typeof enrolmentResponse.static>>(true);
export const enrolmentBody = agree<Same<EnrolmentRequest, typeof enrolmentRequest.static>>(true);
type ServiceSpend = NonNullable<(typeof proofResponse.static)["spend"]>;
// The members the guard reads of a verified spend, and the status's spend the same object (null until decided).
export const spendRead = agree<Same<keyof ServiceSpend, "nullifier" | "commitment" | "amount" | "currency" | "payee">>(true);
export const statusSpend = agree<Same<(typeof statusResponse.static)["spend"], ServiceSpend | null | undefined>>(true);
export const sessionSpend = agree<Same<BudgetSession["spend"], Pick<ServiceSpend, "nullifier" | "commitment">>>(true);
export const sessionPrice = agree<Same<Pick<BudgetSession, "amount" | "currency">, Pick<ServiceSpend, "amount" | "currency">>>(true);
// @ts-expect-error the check itself can fail: a group is not an agent
export const differs = agree<Same<Agent, Group>>(true);
