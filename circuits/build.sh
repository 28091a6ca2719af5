#!/usr/bin/env bash
# Rebuilds the circuit artifacts in circuits/artifacts/ from agent_identity.circom:
# compile with circom2, a fresh powers-of-tau ceremony (2^9, enough for the
# circuit's ~420 constraints), one phase-2 contribution, and the exported
# verification key. Each contribution takes entropy from /dev/urandom, so a
# rebuild yields a new key: every registered agent keeps working (identities
# do not depend on the key) but proofs made with the old zkey stop verifying.
set -euo pipefail
cd "$(dirname "$0")/.."
snarkjs="node node_modules/snarkjs/build/cli.cjs"
work=circuits/.work
out=circuits/artifacts
name=agent_identity
rm -rf "$work"; mkdir -p "$work" "$out"

step() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
entropy() { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'; }

step "compile $name.circom"
node_modules/.bin/circom2 "circuits/$name.circom" --r1cs --wasm -l node_modules -o "$work" >/dev/null
step "powers of tau (2^9)"
$snarkjs powersoftau new bn128 9 "$work/pot0.ptau" >/dev/null
$snarkjs powersoftau contribute "$work/pot0.ptau" "$work/pot1.ptau" --name=zkagent -e="$(entropy)" >/dev/null
$snarkjs powersoftau prepare phase2 "$work/pot1.ptau" "$out/pot9_final.ptau" >/dev/null
step "groth16 setup + phase-2 contribution"
$snarkjs groth16 setup "$work/$name.r1cs" "$out/pot9_final.ptau" "$work/${name}_0.zkey" >/dev/null
$snarkjs zkey contribute "$work/${name}_0.zkey" "$out/$name.zkey" --name=zkagent -e="$(entropy)" >/dev/null
$snarkjs zkey export verificationkey "$out/$name.zkey" "$out/verification_key.json" >/dev/null
cp "$work/$name.r1cs" "$out/$name.r1cs"
cp "$work/${name}_js/$name.wasm" "$out/$name.wasm"
step "verify zkey against r1cs and ptau"
$snarkjs zkey verify "$out/$name.r1cs" "$out/pot9_final.ptau" "$out/$name.zkey" >/dev/null
rm -rf "$work"
step "done: $(ls "$out" | tr '\n' ' ')"
