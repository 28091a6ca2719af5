// Web Bot Auth (RFC 9421 HTTP Message Signatures, tag "web-bot-auth") on
// both sides: agents sign their requests with their identity's Ed25519 key
// naming their operator; merchants verify against the operators they trust.
// docs/http-auth.md, "Signed agents (Web Bot Auth)".
export {
  DIRECTORY_PATH,
  DIRECTORY_TAG,
  DIRECTORY_TYPE,
  DirectoryError,
  type DirectoryKeys,
  directoryResponse,
  type KeyDirectory,
  keyDirectory,
  readDirectory,
} from "./directory";
export { type Ed25519Jwk, keyIdOf, publicJwk } from "./keys";
export { contentDigestField, contentDigestProblem } from "./digest";
export { MemoryNonceStore, type MemoryNonceStoreOptions, type NonceStore, NonceStoreFull, NonceStoreUnavailable, nonceKey } from "./nonces";
export { PostgresNonceStore, type PostgresNonceStoreOptions, type PostgresQueryClient } from "./nonces-postgres";
export { type RedisCommandClient, RedisNonceStore, type RedisNonceStoreOptions } from "./nonces-redis";
export { type RequestSigner, requestSigner, SIGNATURE_TTL_SECONDS } from "./sign";
export { directoryUrl, SIGNATURE_AGENT, signatureAgentField, signatureAgentUrl } from "./signature-agent";
export {
  DEFAULT_CLOCK_SKEW,
  DEFAULT_MAX_WINDOW,
  hasSignature,
  MAX_NONCE_LENGTH,
  type NoncePolicy,
  type SignatureCheck,
  type SignatureReason,
  type SignatureVerifyOptions,
  type SignedAgent,
  verifyRequestSignature,
  WEB_BOT_AUTH_TAG,
} from "./verify";
