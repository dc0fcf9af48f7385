//! The command line: clap argument structs, their conversion into library inputs, and
//! text/JSON output. Only this module (and `main.rs`) prints or reads arguments.
// Input handling: every narrowing or sign-changing conversion is checked (`try_from`,
// `from_le_bytes`), never a silent `as`.
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_possible_wrap)]

/// Writes a line of a command's output to standard output; a failed write (a pipe
/// closed by `| head`, a full disk) returns from the command with the I/O error,
/// which `main` treats as the end of the output when the pipe was closed. Every
/// command prints through `outln!`/`out!`, never `println!`, which would abort.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)?
    }};
}

/// [`outln!`] without the newline.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*)?
    }};
}

mod archive_args;
mod audit_cmds;
mod board_cmds;
mod book_args;
mod book_cmds;
mod docs_cmds;
mod engine_cmds;
mod eval_cmds;
mod explore_cmds;
mod flags;
mod jobs;
mod label_store;
mod labels_cmds;
mod plan_cmds;
mod progress;
mod repertoire_cmds;
mod review_cmds;
mod search_args;
mod search_cmds;
mod selfplay_cmds;
mod thor_cmds;
mod train_cmds;

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::position::Position;

/// thorbook: Othello opening books from WTHOR archives, and an engine that plays them.
#[derive(Parser, Debug)]
#[command(name = "thorbook", version, about, long_about = None)]
pub(crate) struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Count the leaves of the game tree (move-generation check and speed test).
    Perft(board_cmds::PerftArgs),
    /// Show a position: diagram, side to move, legal moves, disc counts.
    Show(board_cmds::ShowArgs),
    /// Solve the positions of a problem file exactly (FFO/Edax `.obf`), checking listed scores.
    Solve(search_cmds::SolveArgs),
    /// Every legal move of a position with its score, best first, and the principal variation.
    Analyze(search_cmds::EngineCommandArgs),
    /// The engine's move for a position: from the book, else by search.
    Bestmove(search_cmds::EngineCommandArgs),
    /// Review a game move by move: each decision's value from the book, a search or the exact solver, the best move and the discs lost.
    Review(review_cmds::ReviewArgs),
    /// Run the engine under the Go Text Protocol (Othello conventions) on stdin/stdout.
    Gtp(engine_cmds::ProtocolArgs),
    /// Run the engine under the NBoard protocol (version 2) on stdin/stdout.
    Nboard(engine_cmds::ProtocolArgs),
    /// Play a game against the engine in the terminal (or from scripted input).
    Play(engine_cmds::PlayArgs),
    /// Engine-versus-engine match (GTP or NBoard engines, or `self`): W/D/L and Elo.
    Match(engine_cmds::MatchArgs),
    /// Opening books: build, query, grow (deviate, deepen, update, learn), check (audit, fix), info, verify, export, import, merge, and cluster plans (plan, shard, submit, status, assemble).
    #[command(subcommand)]
    Book(book_cmds::BookCommand),
    /// WTHOR archives: info, games, stats, check, export.
    #[command(subcommand)]
    Thor(thor_cmds::ThorCommand),
    /// Self-play games for book building: reproducible for a seed, resumable, in shards
    /// for a cluster; written as transcripts, GGF or JSON lines.
    Selfplay(selfplay_cmds::SelfPlayArgs),
    /// Train the pattern evaluation on WTHOR archives (theoretical scores and exact solves).
    Train(train_cmds::TrainArgs),
    /// Label stores: exact solves of archive positions in shards for a cluster, merged
    /// stores, what a store holds.
    #[command(subcommand)]
    Labels(labels_cmds::LabelsCommand),
    /// Measure and store the evaluation's search-leaf correction, which keeps searches
    /// from leaning toward the side that makes their last choice.
    Calibrate(eval_cmds::CalibrateArgs),
    /// The static evaluation of a position (per-pattern contributions with --verbose).
    Eval(eval_cmds::EvalCommandArgs),
    /// Error of the evaluation (static or searched) against exact scores of archive games
    /// (and, without --exact-only, their theoretical scores corrected as `train` does).
    EvalError(eval_cmds::EvalErrorArgs),
    /// The opening explorer in the browser: Thor statistics, book and engine per position.
    Explore(explore_cmds::ExploreArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(docs_cmds::CompletionsArgs),
    /// Print the man page (or write one per command with --dir; the Markdown reference
    /// with --markdown).
    Man(docs_cmds::ManArgs),
}

/// Which evaluation a command searches with.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct EvalChoiceArgs {
    /// Weight file of the pattern evaluation (default: the bundled weights).
    #[arg(long = "eval", value_name = "FILE", conflicts_with = "classic_eval")]
    pub eval_file: Option<std::path::PathBuf>,
    /// Use the hand-weighted classic evaluation instead (a baseline for comparisons).
    #[arg(long)]
    pub classic_eval: bool,
}

impl EvalChoiceArgs {
    /// True when an evaluation is named (else a command's default applies).
    pub(crate) fn is_given(&self) -> bool {
        self.eval_file.is_some() || self.classic_eval
    }

    /// The evaluation these arguments name.
    pub(crate) fn source(&self) -> crate::eval::EvalSource {
        use crate::eval::EvalSource;
        match (&self.eval_file, self.classic_eval) {
            (_, true) => EvalSource::Classic,
            (Some(p), false) => EvalSource::File(p.clone()),
            (None, false) => EvalSource::Bundled,
        }
    }
}

/// A position given on the command line: a move sequence from the start, or board text.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct PositionArgs {
    /// Moves from the start position, e.g. `f5d6c3` or "f5 d6 c3" (passes are inferred).
    #[arg(long, conflicts_with = "board")]
    pub moves: Option<String>,
    /// Board text: 64 squares A1..H8 (X, O, -) then the side to move (X or O). Board
    /// text usually starts with `-`: `--board "---…"` and `--board=---…` both work.
    #[arg(long, allow_hyphen_values = true)]
    pub board: Option<String>,
}

impl PositionArgs {
    /// The opening these arguments name: the most specific named position along the
    /// moves, or the named position the board is.
    pub(crate) fn opening(&self) -> Option<crate::openings::Opening> {
        if let Some(text) = &self.board {
            return crate::position::Position::parse_board_text(text).ok().and_then(|p| crate::openings::at(&p.board));
        }
        let moves = crate::square::parse_move_sequence(self.moves.as_deref()?).ok()?;
        crate::openings::name_line(&moves)
    }

    /// The position these arguments name (the start position when neither is given).
    pub(crate) fn position(&self) -> anyhow::Result<Position> {
        if let Some(text) = &self.board {
            return Ok(Position::parse_board_text(text)?);
        }
        match &self.moves {
            Some(seq) => Ok(Position::from_moves(seq)?),
            None => Ok(Position::START),
        }
    }
}

/// The `thorbook` binary: parses the command line, runs the command, prints an error
/// with its causes on one line, and gives the exit status (0; 1 for a failure; 2 for a
/// wrong argument; 130 for an interrupted run that can resume). The binary is this
/// call alone, so that the commands' pipelines can stay private to the crate: scripts
/// reach them through the binary and the file formats.
pub fn main() -> ExitCode {
    // Which copies of the hot kernels to run at most (`crate::cpu`): for comparing
    // them in one binary, or ruling the fast ones out of a problem.
    match std::env::var("THORBOOK_CPU") {
        Err(std::env::VarError::NotPresent) => {}
        Ok(name) if name == "auto" => {}
        Ok(name) if crate::cpu::Level::from_name(&name).is_some() => {
            crate::cpu::cap(crate::cpu::Level::from_name(&name).unwrap_or(crate::cpu::Level::Baseline));
        }
        _ => {
            eprintln!("thorbook: THORBOOK_CPU must be auto (the default), baseline, x86-64-v3 or x86-64-v4");
            return ExitCode::from(2);
        }
    }
    match run(parse()) {
        Ok(code) => code,
        Err(err) => {
            // A closed pipe (e.g. `| head`) is the end of the output, not a failure.
            let broken_pipe = err.chain().any(|cause| {
                cause.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            });
            if broken_pipe {
                return ExitCode::SUCCESS;
            }
            eprintln!("thorbook: {}", error_message(&err));
            exit_status(&err)
        }
    }
}

/// Parses the command line as `thorbook` does (exiting with clap's message and status
/// 2 on a wrong one).
fn parse() -> Cli {
    use clap::FromArgMatches;
    let matches = command().get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// The command line's definition as `thorbook` parses it. Negative numbers are values,
/// so that `--time -1` is refused by the option's own range check rather than taken for
/// an unknown flag.
fn command() -> clap::Command {
    use clap::CommandFactory;
    fn negatives(cmd: clap::Command) -> clap::Command {
        // Only on options that take values: clap's debug assertions (on in a debug
        // build) refuse the setting on a flag, and `thorbook` would panic at start.
        cmd.mut_args(|a| if a.get_action().takes_values() { a.allow_negative_numbers(true) } else { a })
            .mut_subcommands(negatives)
    }
    // `--version` also says which copies of the hot code this CPU runs (`crate::cpu`).
    let long_version = format!("{}\nCPU: runs the {} copies", env!("CARGO_PKG_VERSION"), crate::cpu::level().name());
    negatives(Cli::command().long_version(long_version))
}

/// The exit status for an error: 2 for a wrong argument (a value out of range), else 1.
fn exit_status(err: &anyhow::Error) -> ExitCode {
    if err.chain().any(|cause| cause.is::<flags::UsageError>()) {
        ExitCode::from(2)
    } else {
        ExitCode::FAILURE
    }
}

/// Runs a parsed command line.
fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let code = run_command(cli)?;
    let skipped = archive_args::SKIPPED_DAMAGED.load(std::sync::atomic::Ordering::Relaxed);
    if skipped > 0 && code == ExitCode::SUCCESS {
        anyhow::bail!("{skipped} damaged games or files were skipped (see the warnings; --lenient exits 0)");
    }
    Ok(code)
}

fn run_command(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Perft(args) => board_cmds::perft(args),
        Command::Show(args) => board_cmds::show(args),
        Command::Explore(args) => explore_cmds::explore(args),
        Command::Thor(cmd) => thor_cmds::run(cmd),
        Command::Book(cmd) => book_cmds::run(cmd),
        Command::Solve(args) => search_cmds::solve(args),
        Command::Analyze(args) => search_cmds::analyze(args),
        Command::Review(args) => review_cmds::review(args),
        Command::Bestmove(args) => search_cmds::bestmove(args),
        Command::Gtp(args) => engine_cmds::gtp(args),
        Command::Nboard(args) => engine_cmds::nboard(args),
        Command::Play(args) => engine_cmds::play(args),
        Command::Match(args) => engine_cmds::run_match(args),
        Command::Train(args) => train_cmds::train(args),
        Command::Selfplay(args) => selfplay_cmds::selfplay(args),
        Command::Eval(args) => eval_cmds::eval(args),
        Command::EvalError(args) => eval_cmds::eval_error(args),
        Command::Calibrate(args) => eval_cmds::calibrate(args),
        Command::Labels(cmd) => labels_cmds::run(cmd),
        Command::Completions(args) => docs_cmds::completions(args),
        Command::Man(args) => docs_cmds::man(args),
    }
}

/// An error and its causes on one line, each said once: many errors name their cause
/// in their own message as well as through `source()`, and printing the chain would
/// repeat it ("No such file or directory (os error 2): No such file or directory (os
/// error 2)").
fn error_message(err: &anyhow::Error) -> String {
    let mut message = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if message.contains(&text) {
            continue;
        }
        if !message.is_empty() {
            message.push_str(": ");
        }
        message.push_str(&text);
    }
    message
}

#[cfg(test)]
mod error_message_tests {
    use super::error_message;

    #[test]
    fn a_cause_named_by_its_error_is_said_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        #[derive(Debug, thiserror::Error)]
        #[error("x.tbk: {source}")]
        struct Named {
            source: std::io::Error,
        }
        let err = anyhow::Error::from(Named { source: io }).context("writing the book");
        assert_eq!(error_message(&err), "writing the book: x.tbk: No such file");
        let plain = anyhow::anyhow!("inner").context("outer");
        assert_eq!(error_message(&plain), "outer: inner");
    }
}

#[cfg(test)]
mod command_tests {
    /// clap's own checks of a definition run only in debug builds, where a failing one
    /// makes `thorbook` panic at start; here they run in every build the tests run in.
    #[test]
    fn the_command_line_passes_clap_s_own_checks() {
        super::command().debug_assert();
    }
}
