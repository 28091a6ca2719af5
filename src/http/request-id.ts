// The request id: the caller's x-request-id when it is a sane token (so a
// gateway's id follows the request through our logs), otherwise a new UUID.
// "Sane" keeps log lines and headers safe: no spaces, quotes, control
// characters or header-splitting, at most 128 characters.
import { randomUUID } from "node:crypto";

export const REQUEST_ID_HEADER = "x-request-id";
const SANE = /^[A-Za-z0-9][A-Za-z0-9._:\-/+=@]{0,127}$/;

export const isSaneRequestId = (value: string | null | undefined): value is string => typeof value === "string" && SANE.test(value);

export function requestIdFor(request: Request): string {
  const incoming = request.headers.get(REQUEST_ID_HEADER);
  return isSaneRequestId(incoming) ? incoming : randomUUID();
}
