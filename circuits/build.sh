#!/usr/bin/env bash
# Compiles circuits/agent_identity.circom with the circom2 that bun.lock pins
# and writes the r1cs and witness wasm to circuits/artifacts/. The compiler is
# deterministic: the committed files are what it writes, byte for byte, and
# `--check` (run by CI) fails when they are not.
#
# The proving key is not made here: it comes from a phase-2 ceremony on the
# public phase-1 file circuits/ptau/ (see docs/operations.md):
#   zkagent ceremony init --out DIR; … contribute DIR; … beacon DIR; … verify DIR
# A changed circuit needs a new ceremony: the shipped one then fails
# `zkagent ceremony verify` (its r1cs no longer matches).
#
#   bash circuits/build.sh [--check]
set -euo pipefail
cd "$(dirname "$0")/.."
name=agent_identity
out=circuits/artifacts
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The phase-1 file is the pinned public one (src/ceremony/ptau.ts), whatever its name.
bun src/ceremony/ptau.ts circuits/ptau/powersOfTau28_hez_final_09.ptau

node_modules/.bin/circom2 "circuits/$name.circom" --r1cs --wasm -l node_modules -o "$work" >/dev/null
if [[ "${1:-}" == "--check" ]]; then
  cmp "$work/$name.r1cs" "$out/$name.r1cs"
  cmp "$work/${name}_js/$name.wasm" "$out/$name.wasm"
  echo "circuit reproduced: $out/$name.r1cs and $name.wasm are what circom2 writes"
else
  cp "$work/$name.r1cs" "$out/$name.r1cs"
  cp "$work/${name}_js/$name.wasm" "$out/$name.wasm"
  echo "wrote $out/$name.r1cs and $name.wasm; a changed circuit needs a new ceremony (docs/operations.md)"
fi
