//! The one integration-test binary (issue 33): every test of the workspace's `deployfit`
//! crate that runs the binary, the server or the compiler's public API, one module per
//! former test file. One binary links the compiler once instead of 38 times. Run one
//! module with `cargo test --test it MODULE::` (e.g. `cargo test --test it fuzz::`).
//!
//! Tests that need a tool a machine with only Rust lacks (Chromium for `report`) are
//! `#[ignore]`d here and run by `.ci/run` with `--ignored`.

mod common;
mod lsp_support;

mod action;
mod amd_mesh;
mod apple;
mod calibration;
mod ci_formats;
mod cli;
mod commands;
mod diagnostics;
mod docs_drift;
mod engine_memory;
mod engines;
mod extends_copies;
mod finder;
mod fleet;
mod fmt;
mod formats;
mod fuzz;
mod golden;
mod gpu_catalog;
mod hardening_files;
mod hardening_perf;
mod hardening_values;
mod hardware;
mod hub;
mod incremental;
mod json_output;
mod layering;
mod low_concurrency;
mod lsp;
mod lsp_fuzz;
mod lsp_hardening;
mod lsp_snapshots;
mod mcp;
mod models;
mod names;
mod native;
mod offload;
mod ollama;
mod parallel;
mod pricing;
mod properties;
mod real_world;
mod report;
mod robustness;
mod serving_accuracy;
mod simulator;
mod solve;
mod speed_accuracy;
mod suggestions;
mod unified;
mod versions;
