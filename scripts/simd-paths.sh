#!/usr/bin/env bash
# Every SIMD path gives the same bits: rebuilds the engine with its kernels capped
# at AVX2 (`simd-max-avx2`) and at baseline x86-64 (`simd-portable`) and runs the pinned
# hashes of every example and test graph (all node types) and the noise kernels' path test
# with each. The default build (widest path the CPU has) is checked by `cargo test`.
# Only the engine's unit tests are rebuilt per variant: the engine alone resolves its
# dependencies' features as `cargo test --workspace` did, so none is compiled again (the
# editor's library, once named beside it for that, cost a compile of both crates per variant).
#
# Both variants compile the engine at opt-level 0 (`cargo test` uses 2): the hashes must not
# depend on the optimiser either (a `max(−0, 0)` once did), and an unoptimised compile of the
# crate takes a quarter of the time, more than the slower run gives back.
set -euo pipefail
cd "$(dirname "$0")/.."
# Only the workspace's crates drop to opt-level 0: the dependencies keep the level
# `cargo test` built them at, so none is compiled again.
opt0=(--config 'profile.dev.package.orogen.opt-level=0')
for feature in simd-max-avx2 simd-portable; do
  echo "== --features $feature, opt-level 0"
  # One compile of the crate per path: both checks are its unit tests.
  cargo test "${opt0[@]}" -p orogen --features "$feature" --lib -- \
    example_graph_outputs_are_pinned_to_the_byte dispatched_kernels_equal_portable_kernels_bit_for_bit
done
