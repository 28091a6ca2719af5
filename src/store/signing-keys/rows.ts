// Rows (snake_case columns, as both dialects return them) to records.
import type { SigningKeyRecord, SigningKeyState } from "./records";
import { int, intOrNull } from "../connection/columns";

export const toSigningKey = (row: any): SigningKeyRecord => ({
  kid: row.kid,
  publicJwk: row.public_jwk,
  privateKey: row.private_key,
  state: row.state as SigningKeyState,
  createdAt: int(row.created_at),
  retiredAt: intOrNull(row.retired_at),
});
