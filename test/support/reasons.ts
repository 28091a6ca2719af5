// The closed set of verification failure reasons, as docs/protocol.md
// ("Verdicts") states it — written out here, not imported from src, so the
// tests check the code against the document.
export const REASONS: ReadonlySet<string> = new Set([
  "invalid_proof_format",
  "invalid_curve_point",
  "invalid_public_input",
  "proof_rejected",
  "unknown_agent",
  "agent_revoked",
  "invalid_signature",
  "signature_not_verifiable",
  "mandate_violation",
  "circuit_retired",
  "message_mismatch",
  "scope_mismatch",
  "depth_mismatch",
  "not_member",
  "stale_notes_root",
  "period_ended",
  "already_spent",
]);
