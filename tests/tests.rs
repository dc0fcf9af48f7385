//! Integration tests: the library through its public API and the real binary.

mod util;

mod audit;
mod backup;
mod board_cli;
mod book;
mod deviate;
mod engine;
mod eval;
mod examples;
mod explorer;
mod fuzz_inputs;
mod interchange;
mod plan;
mod properties;
mod search;
mod slurm;
mod thor_corrupt;
mod thor_data;
