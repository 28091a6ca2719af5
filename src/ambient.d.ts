// Modules without type declarations of their own.
declare module "*.wasm" {
  const path: string;
  export default path;
}
declare module "*.zkey" {
  const path: string;
  export default path;
}
declare module "*.r1cs" {
  const path: string;
  export default path;
}
declare module "*.ptau" {
  const path: string;
  export default path;
}
declare module "*.css" {
  const path: string;
  export default path;
}
declare module "swagger-ui-dist/swagger-ui-bundle.js" {
  const path: string;
  export default path;
}
declare module "snarkjs";
declare module "circomlibjs";
declare module "ffjavascript";
