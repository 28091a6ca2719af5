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
/** The subset of snarkjs's binary-file reader that src/ceremony/zkey-contributions.ts uses. */
declare module "@iden3/binfileutils" {
  interface BinFd {
    pos: number;
    read(length: number): Promise<Uint8Array>;
    readULE32(): Promise<number>;
    close(): Promise<void>;
  }
  export function readBinFile(file: { type: "mem"; data: Uint8Array }, type: string, maxVersion: number): Promise<{ fd: BinFd; sections: unknown }>;
  export function startReadUniqueSection(fd: BinFd, sections: unknown, id: number): Promise<void>;
  export function endReadSection(fd: BinFd): Promise<void>;
}
