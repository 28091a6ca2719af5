// The inside of the members body thread (members-body.ts starts it): the
// first message is its init; after it, { id, bytes } is answered with the
// commitments or the ApiError the route throws.
import { ApiError } from "../errors";
import { type MembersAnswer, membersOf } from "./members-body";

declare const self: Worker;

let ready = false;

self.onmessage = (event: MessageEvent<{ id: number; bytes: Uint8Array } | Record<string, never>>) => {
  const data = event.data;
  if (!ready) {
    ready = true;
    self.postMessage({ ready: true });
    return;
  }
  const { id, bytes } = data as { id: number; bytes: Uint8Array };
  let answer: MembersAnswer;
  try {
    answer = { id, commitments: membersOf(bytes).join(",") };
  } catch (error) {
    // Anything but an ApiError is a fault here, not the client's: the caller fails that request (5xx) and the thread lives on.
    answer =
      error instanceof ApiError
        ? { id, error: { kind: error.kind, body: error.body, details: error.details } }
        : { id, fault: error instanceof Error ? error.message : String(error) };
  }
  self.postMessage(answer);
};
