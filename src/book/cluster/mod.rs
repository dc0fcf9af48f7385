//! Builds, growth rounds and audit checks cut into shards that run anywhere
//! (crate-private; the binary's `book plan|shard|status|submit|assemble` and the plan
//! files in book-format.md are the interface): the plan on disk, and its Slurm job
//! arrays.

pub(crate) mod plan;
pub(crate) mod slurm;
