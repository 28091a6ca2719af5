// Authentication, once for every route that needs it: a route declares
// `{ auth: true }` and its handler receives `key`, the caller's live API key
// record. The macro's resolve runs before the handler and before any body is
// read (routes that take a body use `parse: "none"` and read it themselves),
// so 401/403 come first, in the order docs/api.md fixes.
import { Elysia } from "elysia";
import { authenticate } from "../modules/keys/service";
import type { KeysStore } from "../store/keys/records";

export const API_KEY_HEADER = "x-api-key";

export const authentication = (deps: { store: KeysStore }) =>
  new Elysia().macro({
    auth: {
      async resolve({ request }) {
        return { key: await authenticate(deps.store, request.headers.get(API_KEY_HEADER)) };
      },
    },
  });
