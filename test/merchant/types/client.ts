// The API client's types (src/merchant/client.ts, written out so that the
// package carries no schema library) held to the service's own schemas, both
// ways: a field added, renamed or retyped on either side fails types.test.ts.
import type { Agent, Enrolment, EnrolmentRequest, Group, GroupTree, Mandate, MandateRecord } from "zkagent/merchant";
import type { agentResponse } from "../../../src/modules/agents/model";
import type { enrolmentRequest, enrolmentResponse } from "../../../src/modules/budgets/model";
import type { groupResponse, groupTreeResponse } from "../../../src/modules/groups/model";
import type { mandateResponse } from "../../../src/modules/mandates/model";
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
// @ts-expect-error the check itself can fail: a group is not an agent
export const differs = agree<Same<Agent, Group>>(true);
