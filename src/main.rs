//! The `thorbook` binary: parse arguments, run, print any error once, set the exit code.
//!
//! Exit codes: 0 success (a closed output pipe included), 1 an error (bad input,
//! damaged file, failed check), 2 wrong arguments (refused by clap, or a value out of
//! range), 130 interrupted.

use std::process::ExitCode;

fn main() -> ExitCode {
    thorbook::cli::main()
}
