//! `thorbook book audit` and `thorbook book fix`: arguments into an [`AuditConfig`]
//! or a [`FixConfig`], progress bars, the reports.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use super::book_args::{open_book, position_from};
use super::progress::Meter;
use super::search_args::SearchArgs;
use crate::book::check::audit::{audit, checks, AuditConfig, AuditError, AuditEvent, AuditReport, Checks, Group};
use crate::book::check::fix::{FixConfig, FixError, FixEvent, Fixer};
use crate::search::Settings;
use crate::setting::OutOfRange;

/// Arguments of `book audit`.
#[derive(Args, Debug)]
pub struct AuditArgs {
    /// The book to audit (default: the bundled book).
    #[arg(long)]
    book: Option<PathBuf>,
    /// Positions to audit.
    #[arg(long, default_value_t = 200)]
    sample: usize,
    /// Walk the book's lines from the position after these moves (default: the start).
    #[arg(long)]
    from: Option<String>,
    /// Audit positions from this ply (60 − empties).
    #[arg(long, default_value_t = 10)]
    min_ply: u32,
    /// ... up to this ply.
    #[arg(long, default_value_t = 30)]
    max_ply: u32,
    /// The walk follows book moves within this many discs of a position's best option.
    #[arg(long, default_value_t = 2)]
    error: i32,
    /// Seed of the sample.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Positions listed among the worst.
    #[arg(long, default_value_t = 10)]
    worst: usize,
    /// Audit the positions of these games (WTHOR files or directories) that the book
    /// holds, instead of the book's own lines: games the book was not built from are
    /// an independent test.
    #[arg(long, num_args = 1.., value_name = "PATHS")]
    games: Vec<PathBuf>,
    /// Also search every position at this level and compare it with the audit search
    /// as the book is (is the book worth more than the engine's own search?).
    #[arg(long, value_name = "LEVEL")]
    compare_level: Option<u8>,
    /// How each position is searched, without the book (default: level 10, a 16 MiB
    /// table per search, one search per core). Audit deeper than the book's leaves.
    #[command(flatten)]
    search: SearchArgs,
    /// Write the report as JSON to this file; searches are kept in FILE.checkpoint as
    /// they finish, so an interrupted audit continues with --resume.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Keep the searches in this file instead (it serves any audit of the same
    /// positions with the same search: another version of the book, say).
    #[arg(long)]
    checkpoint: Option<PathBuf>,
    /// Continue from the checkpoint: the searches it holds are not made again.
    #[arg(long)]
    resume: bool,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

impl TryFrom<&AuditArgs> for AuditConfig {
    type Error = anyhow::Error;

    fn try_from(a: &AuditArgs) -> anyhow::Result<AuditConfig> {
        let defaults = Settings { hash_mib: 16, threads: crate::search::default_threads(), ..Settings::default() };
        let from = position_from(a.from.as_deref())?;
        let search = a.search.settings(&defaults)?;
        let compare = a
            .compare_level
            .map(|n| {
                let level = crate::search::Level::new(n);
                level.map(|l| Settings { eval: search.eval.clone(), ..Settings { level: Some(l), ..defaults.clone() } })
            })
            .transpose()
            .map_err(|e| anyhow::anyhow!(e.named("--compare-level")))?;
        let games = if a.games.is_empty() {
            None
        } else {
            let archives = super::archive_args::ArchiveArgs { paths: a.games.clone(), ..Default::default() };
            Some(archives.load(false)?.games.iter().map(|g| g.moves_with_passes()).collect())
        };
        Ok(AuditConfig {
            games,
            compare,
            sample: a.sample,
            from,
            min_ply: a.min_ply,
            max_ply: a.max_ply,
            error: a.error,
            search,
            seed: a.seed,
            worst: a.worst,
        })
    }
}

impl AuditArgs {
    /// The log of searches: `--checkpoint`, else `-o`'s with `.checkpoint`.
    fn checkpoint(&self) -> Option<PathBuf> {
        self.checkpoint.clone().or_else(|| {
            self.output.as_ref().map(|o| {
                let mut p = o.as_os_str().to_owned();
                p.push(".checkpoint");
                PathBuf::from(p)
            })
        })
    }
}

/// The searches of the audit `args` describes, for `book plan audit`.
pub(super) fn audit_checks(args: &AuditArgs) -> anyhow::Result<Checks> {
    if args.resume {
        return Err(crate::cli::flags::usage(
            "--resume is for local runs: a plan resumes by itself (run `book shard` or `book submit` again)",
        ));
    }
    if let Some(level) = args.compare_level {
        anyhow::bail!(
            "--compare-level cannot be planned with the audit: plan the comparison as an audit of its own with \
             --level {level} and the checkpoint FILE.compare (FILE: this audit's checkpoint)"
        );
    }
    let Some(log) = args.checkpoint() else {
        anyhow::bail!("book plan audit needs the log its shards fill: --checkpoint FILE (or -o REPORT)");
    };
    let config = AuditConfig::try_from(args)?;
    let book = open_book(args.book.as_deref())?;
    checks(&book, &config, &log).map_err(audit_error)
}

fn audit_error(e: AuditError) -> anyhow::Error {
    match e {
        AuditError::Setting(e) => flag_error(&e),
        AuditError::Search(e) => super::book_args::build_error(e),
        e => e.into(),
    }
}

/// Runs `book audit`.
pub fn audit_cmd(args: AuditArgs) -> anyhow::Result<ExitCode> {
    let config = AuditConfig::try_from(&args)?;
    let book = open_book(args.book.as_deref())?;
    let checkpoint = args.checkpoint();
    if args.resume && checkpoint.is_none() {
        return Err(crate::cli::flags::usage(
            "--resume needs a checkpoint: give -o REPORT (REPORT.checkpoint) or --checkpoint FILE",
        ));
    }
    let bar = Meter::new("audit", "searches");
    let report = audit(&book, &config, checkpoint.as_deref().map(|p| (p, args.resume)), &|event| match event {
        AuditEvent::Sampled { positions, candidates, resumed } => {
            bar.set_message(format!("({positions} of {candidates} positions, {resumed} from the checkpoint)"));
        }
        AuditEvent::Searched { done, total } => bar.update(done, total),
        AuditEvent::LockRefused(refused) => bar.suspend(|| {
            let log = checkpoint.as_deref().map_or(String::new(), |p| format!("{}: ", p.display()));
            eprintln!("warning: {log}{refused}: the log is not locked; run no second audit on it")
        }),
    });
    bar.finish();
    let report = report.map_err(audit_error)?;
    if let Some(out) = &args.output {
        let json = serde_json::to_vec_pretty(&report)?;
        crate::fileio::atomic_write(out, &json).with_context(|| out.display().to_string())?;
    }
    if args.json {
        outln!("{}", serde_json::to_string(&report)?);
    } else {
        print_report(&report)?;
    }
    eprintln!(
        "{} positions audited ({} searched now), {:.1} s{}",
        report.positions,
        report.searched,
        report.elapsed.as_secs_f64(),
        args.output.as_ref().map(|o| format!("; report in {}", o.display())).unwrap_or_default()
    );
    Ok(ExitCode::SUCCESS)
}

fn print_report(r: &AuditReport) -> anyhow::Result<()> {
    outln!(
        "{} positions of {} on the book's lines, searched at {}: book value − search, discs for the side to move",
        r.positions,
        r.candidates,
        r.search
    );
    outln!("  all                          MAE {:5.2}   signed {:+5.2}", r.mae, r.bias);
    if let Some(c) = &r.compare {
        outln!("  {} against the audit search: MAE {:5.2}   signed {:+5.2}", c.group, c.mae, c.bias);
    }
    if let Some(d) = &r.decisions {
        outln!(
            "  the book's move against that search's, where they differ ({} of {} positions): book better {}, \
             search better {}, mean gain {:+.2} discs (book moves {}: {:+.2}; leaf moves {}: {:+.2})",
            d.differing,
            d.positions,
            d.book_better,
            d.search_better,
            d.mean_gain,
            d.book_moves.differing,
            d.book_moves.mean_gain,
            d.leaf_moves.differing,
            d.leaf_moves.mean_gain
        );
    }
    let section = |title: &str, groups: &[Group]| -> anyhow::Result<()> {
        outln!("{title}");
        for g in groups {
            outln!("  {:<28} {:>4}  MAE {:5.2}   signed {:+5.2}", g.group, g.positions, g.mae, g.bias);
        }
        Ok(())
    };
    section("by ply", &r.by_ply)?;
    section("by side to move", &r.by_side)?;
    section("by where the value comes from", &r.by_kind)?;
    section("by the level of the deciding leaf", &r.by_level)?;
    section("by book children", &r.by_children)?;
    section("by depth of the deciding leaf below", &r.by_depth_below)?;
    outln!("worst");
    for a in &r.worst {
        outln!(
            "  {:+4} (book {:+3}, search {:+3}{})  {} to move  {}",
            a.error,
            a.value,
            a.score,
            if a.score_exact { " exact" } else { "" },
            a.side_to_move,
            a.line
        );
    }
    Ok(())
}

/// Arguments of `book fix`.
#[derive(Args, Debug)]
pub struct FixArgs {
    /// The book to fix (default: the bundled book).
    #[arg(long)]
    book: Option<PathBuf>,
    /// A value contradicted by the check by more than this many discs is fixed.
    #[arg(long, default_value_t = 2)]
    threshold: i32,
    /// Check the positions on lines whose moves score within this many discs of the best.
    #[arg(long, default_value_t = 2)]
    error: i32,
    /// Check positions from this ply (60 − empties).
    #[arg(long, default_value_t = 0)]
    min_ply: u32,
    /// ... up to this ply.
    #[arg(long, default_value_t = 30)]
    max_ply: u32,
    /// Check at most this many positions (the shallowest first).
    #[arg(long)]
    max_positions: Option<usize>,
    /// Stop after this many seconds: checks stop at half of it (a resumed fix checks the rest), rounds of searching leaves again start until the end.
    #[arg(long)]
    max_time: Option<f64>,
    /// Walk the lines from the position after these moves (default: the start).
    #[arg(long)]
    from: Option<String>,
    /// The level (or depth, exact threshold, selectivity) that checks values and
    /// searches leaves again (required); a 16 MiB table per search, one per core.
    #[command(flatten)]
    search: SearchArgs,
    /// Continue an interrupted fix into the same output (OUT.fix keeps its checks).
    #[arg(long)]
    resume: bool,
    /// Output book.
    #[arg(short, long)]
    output: PathBuf,
}

impl TryFrom<&FixArgs> for FixConfig {
    type Error = anyhow::Error;

    fn try_from(a: &FixArgs) -> anyhow::Result<FixConfig> {
        if a.search.level.is_none() && a.search.depth.is_none() {
            anyhow::bail!("book fix needs the level to check and search at: --level N (or --depth D)");
        }
        let defaults = Settings { hash_mib: 16, threads: crate::search::default_threads(), ..Settings::default() };
        let time = a
            .max_time
            .map(|t| {
                crate::search::settings::seconds(t, false)
                    .map_err(|e| crate::cli::flags::usage(format!("--max-time {e}")))
            })
            .transpose()?;
        Ok(FixConfig {
            search: a.search.settings(&defaults)?,
            threshold: a.threshold,
            error: a.error,
            min_ply: a.min_ply,
            max_ply: a.max_ply,
            max_positions: a.max_positions,
            time,
            from: position_from(a.from.as_deref())?,
        })
    }
}

/// The checks of the fix `args` describes, for `book plan fix`.
pub(super) fn fix_checks(args: &FixArgs) -> anyhow::Result<Checks> {
    if args.resume {
        return Err(crate::cli::flags::usage(
            "--resume is for local runs: a plan resumes by itself (run `book shard` or `book submit` again)",
        ));
    }
    if args.max_time.is_some() {
        anyhow::bail!(
            "--max-time cannot be planned (the checks would depend on the machines): use --max-positions, and give \
             --max-time to the `book fix --resume` that runs the rounds"
        );
    }
    let config = FixConfig::try_from(args)?;
    let book = open_book(args.book.as_deref())?;
    Fixer::new(config, &args.output).checks(&book).map_err(fix_error)
}

fn fix_error(e: FixError) -> anyhow::Error {
    match e {
        FixError::Setting(e) => flag_error(&e),
        e @ FixError::Resume { .. } => anyhow::anyhow!("{e} (run without --resume)"),
        FixError::Search(e) => super::book_args::build_error(e),
        e => e.into(),
    }
}

/// Runs `book fix`.
pub fn fix_cmd(args: FixArgs) -> anyhow::Result<ExitCode> {
    let config = FixConfig::try_from(&args)?;
    let book = open_book(args.book.as_deref())?;
    let bar = Meter::new("fix", "");
    let summary = Fixer::new(config, &args.output).resume(args.resume).run(&book, &|event| match event {
        FixEvent::Checked { done, total } => {
            bar.set_prefix("checks");
            bar.update(done, total);
        }
        FixEvent::Round { number, contradicted, leaves } => {
            bar.set_prefix(format!("round {number}"));
            bar.set_message(format!("({contradicted} values contradicted, {leaves} leaves)"));
            bar.reset();
        }
        FixEvent::Searched { done, total } => bar.update(done, total),
        FixEvent::LockRefused(refused) => {
            bar.suspend(|| eprintln!("warning: {refused}: the fix's log is not locked; run no second fix on it"))
        }
    });
    bar.finish();
    let s = summary.map_err(fix_error)?;
    outln!(
        "checked {} positions: contradicted by more than the threshold {} -> {}, mean absolute difference {:.2} -> {:.2}",
        s.checked,
        s.contradicted_before,
        s.contradicted_after,
        s.mae_before,
        s.mae_after
    );
    eprintln!(
        "{} leaves searched again in {} rounds, {:.1} s; stopped: {:?}; wrote {} ({} bytes)",
        s.searches,
        s.rounds,
        s.elapsed.as_secs_f64(),
        s.stop,
        args.output.display(),
        s.written.bytes
    );
    Ok(ExitCode::SUCCESS)
}

/// A setting out of range, named by its flag.
fn flag_error(e: &OutOfRange) -> anyhow::Error {
    super::flags::out_of_range(e)
}
