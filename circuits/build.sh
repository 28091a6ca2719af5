#!/usr/bin/env bash
# Compiles the circuits with the circom2 that bun.lock pins and writes each
# one's r1cs and witness wasm to its ceremony's directory: circuits/artifacts/
# (the agent circuit) and circuits/artifacts/budget_spend/. The compiler is
# deterministic: the committed files are what it writes, byte for byte, and
# `--check` (run by CI) fails when they are not.
#
#   agent_identity.circom   no optimisation flag (the shipped ceremony's r1cs)
#   budget_spend.circom     --O2: linear constraints folded away; at the
#                           default level the statement is ≈ 2.4× larger and
#                           would need a phase 1 four times the size
#
# The proving keys are not made here: each comes from a phase-2 ceremony on
# its phase-1 file in circuits/ptau/ (see docs/operations.md):
#   zkagent ceremony init --out DIR; … contribute DIR; … beacon DIR; … verify DIR
# A changed circuit needs a new ceremony: the shipped one then fails
# `zkagent ceremony verify` (its r1cs no longer matches).
#
#   bash circuits/build.sh [--check] [NAME]
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
check=false
if [[ "${1:-}" == "--check" ]]; then
  check=true
  shift
fi
only="${1:-}"

# The agent circuit's phase-1 file is the pinned public one (src/ceremony/ptau.ts), whatever its name.
bun src/ceremony/ptau.ts circuits/ptau/powersOfTau28_hez_final_09.ptau

build() {
  local name=$1 out=$2
  shift 2
  [[ -n "$only" && "$only" != "$name" ]] && return 0
  node_modules/.bin/circom2 "circuits/$name.circom" --r1cs --wasm "$@" -l node_modules -l circuits -o "$work" >/dev/null
  if $check; then
    cmp "$work/$name.r1cs" "$out/$name.r1cs"
    cmp "$work/${name}_js/$name.wasm" "$out/$name.wasm"
    echo "circuit reproduced: $out/$name.r1cs and $name.wasm are what circom2 writes"
  else
    cp "$work/$name.r1cs" "$out/$name.r1cs"
    cp "$work/${name}_js/$name.wasm" "$out/$name.wasm"
    echo "wrote $out/$name.r1cs and $name.wasm; a changed circuit needs a new ceremony (docs/operations.md)"
  fi
}

build agent_identity circuits/artifacts
build budget_spend circuits/artifacts/budget_spend --O2
