// The agent's commands, as both CLIs list them: the full one (index.ts,
// the zkagent package) and the agent's alone (agent.ts, the @zkagent/agent
// bin). One list, so the two cannot describe them differently.
export const agentCommandsSummary = `  identity new           create an agent identity (secret, commitment, signing keys; --semaphore: for groups)
  prove                  prove an identity for a challenge (nonce, action, context), group membership (--group-challenge), or a budget spend (--budget-challenge)
  budget join|show       keep a budgeted group's membership (the owner's enrolment answer and the member's secret); show its terms and wallet
  sign                   sign a challenge with the agent's Ed25519 key
  fetch                  an HTTP request that answers ZKAgent challenges (a curl for agents)
  mcp                    an MCP server (stdio) with the agent's tools: identity, fetch, prove
  directory              the Web Bot Auth key directory (public keys) of agents' identities
  receipt verify         check a signed verification receipt against a JWKS
  verify                 verify a snarkjs Groth16 proof (drop-in for snarkjs groth16 verify)`;
