//! The `thorbook` binary: parse arguments, run, print any error once, set the exit code.
//!
//! Exit codes: 0 success (a closed output pipe included), 1 an error (bad input,
//! damaged file, failed check), 2 wrong arguments (refused by clap, or a value out of
//! range), 130 interrupted.

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = thorbook::cli::parse();
    match thorbook::cli::run(cli) {
        Ok(code) => code,
        Err(err) => {
            // A closed pipe (e.g. `| head`) is the end of the output, not a failure.
            let broken_pipe = err.chain().any(|cause| {
                cause.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            });
            if broken_pipe {
                return ExitCode::SUCCESS;
            }
            eprintln!("thorbook: {}", thorbook::cli::error_message(&err));
            thorbook::cli::exit_status(&err)
        }
    }
}
