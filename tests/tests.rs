//! Integration tests: the library through its public API and the real binary.

/// `base` with the given fields set: how code outside the crate makes a configuration,
/// which is `#[non_exhaustive]` (a new field does not break it).
macro_rules! with {
    ($base:expr $(, $field:ident: $value:expr)* $(,)?) => {{
        #[allow(unused_mut)]
        let mut value = $base;
        $(value.$field = $value;)*
        value
    }};
}

mod util;

mod archives;
mod audit;
mod backup;
mod board_cli;
mod book;
mod book_resume;
mod deviate;
mod docs;
mod engine;
mod eval;
mod examples;
mod explorer;
mod fuzz_inputs;
mod interchange;
mod locks;
mod plan;
mod properties;
mod repertoire;
mod review;
mod search;
mod slurm;
mod thor_corrupt;
mod thor_data;
