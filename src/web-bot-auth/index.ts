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
export { MemoryNonceStore, type NonceStore, NonceStoreFull } from "./nonces";
export { type RequestSigner, requestSigner, SIGNATURE_TTL_SECONDS } from "./sign";
export { SIGNATURE_AGENT, signatureAgentField, signatureAgentOrigin } from "./signature-agent";
export {
  DEFAULT_CLOCK_SKEW,
  DEFAULT_MAX_WINDOW,
  hasSignature,
  MAX_NONCE_LENGTH,
  type SignatureCheck,
  type SignatureReason,
  type SignatureVerifyOptions,
  type SignedAgent,
  verifyRequestSignature,
  WEB_BOT_AUTH_TAG,
} from "./verify";
