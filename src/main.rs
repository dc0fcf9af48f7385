//! The `thorbook` binary: parse arguments, run, print any error once, set the exit code.
//!
//! Exit codes: 0 success, 1 an error (bad input, damaged file, failed check),
//! 2 wrong arguments (from clap).

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = thorbook::cli::Cli::parse();
    match thorbook::cli::run(cli) {
        Ok(code) => code,
        Err(err) => {
            // A closed pipe (e.g. `| head`) is not a failure.
            if let Some(io) = err.downcast_ref::<std::io::Error>() {
                if io.kind() == std::io::ErrorKind::BrokenPipe {
                    return ExitCode::SUCCESS;
                }
            }
            eprintln!("thorbook: {err:#}");
            ExitCode::FAILURE
        }
    }
}
