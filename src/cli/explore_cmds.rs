//! `thorbook explore`: loads the archives and the book, then serves the explorer.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use super::archive_args::ArchiveArgs;
use crate::book::BookSource;
use crate::explorer::{serve, Explorer, ServeOptions};

/// Arguments of `thorbook explore`.
#[derive(Args, Debug)]
pub struct ExploreArgs {
    #[command(flatten)]
    archives: ArchiveArgs,
    /// Book (default: the bundled book).
    #[arg(long, conflicts_with = "no_book")]
    book: Option<PathBuf>,
    /// Serve without a book.
    #[arg(long)]
    no_book: bool,
    /// Port (0: any free port).
    #[arg(long, default_value_t = ServeOptions::default().addr.port())]
    port: u16,
    /// Address to bind. The default, 127.0.0.1, keeps the explorer to this machine.
    #[arg(long, default_value_t = ServeOptions::default().addr.ip())]
    bind: std::net::IpAddr,
    /// Worker threads answering requests.
    #[arg(long, default_value_t = ServeOptions::default().workers)]
    workers: usize,
    /// Strongest engine level a request may ask for (0: no engine scores).
    #[arg(long, default_value_t = crate::explorer::MAX_ENGINE_LEVEL,
          value_parser = clap::value_parser!(u8).range(0..=crate::explorer::MAX_ENGINE_LEVEL as i64))]
    max_level: u8,
    /// Longest engine search per request, in seconds: the scores are then those of the
    /// deepest finished iteration (marked `cut_short`).
    #[arg(long, default_value_t = crate::explorer::ENGINE_TIME.as_secs_f64())]
    engine_time: f64,
    /// Open the page in the default browser.
    #[arg(long)]
    open: bool,
    /// Game reviews' analyses.
    #[command(flatten)]
    store: super::review_cmds::StoreArgs,
}

pub(super) fn explore(args: ExploreArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!((1..=64).contains(&args.workers), "--workers must be from 1 to 64, got {}", args.workers);
    let engine_time = crate::search::settings::seconds(args.engine_time, false)
        .map_err(|e| crate::cli::flags::usage(format!("--engine-time {e}")))?;
    let start = Instant::now();
    let spinner = ProgressBar::new_spinner()
        .with_style(ProgressStyle::with_template("{spinner} {msg} {elapsed}").expect("valid template"));
    spinner.enable_steady_tick(std::time::Duration::from_millis(120));
    spinner.set_message("loading and indexing the games");
    let db = args.archives.load(true)?;
    spinner.set_message("opening the book");
    let source = match (&args.book, args.no_book) {
        (_, true) => BookSource::None,
        (Some(p), false) => BookSource::File(p.clone()),
        (None, false) => BookSource::Bundled,
    };
    let book = source.open()?;
    let store = args.store.open()?.unwrap_or_else(crate::engine::review::AnalysisStore::in_memory);
    if let (Some(b), Some(p)) = (&book, &args.book) {
        b.verify().map_err(|e| anyhow::anyhow!("book {}: {e}", p.display()))?;
    }
    spinner.finish_and_clear();
    let explorer = Explorer::new(db, book)
        .with_max_engine_level(args.max_level)
        .with_engine_time(engine_time)
        .with_reviews(source, store);
    eprintln!(
        "indexed {} games ({} positions) in {:.1} s",
        explorer.games(),
        explorer.index_len(),
        start.elapsed().as_secs_f64()
    );
    let stop = crate::work::StopHandle::new();
    {
        let stop = stop.clone();
        ctrlc::set_handler(move || stop.stop())?;
    }
    let mut options = ServeOptions::default();
    (options.addr, options.workers) = (std::net::SocketAddr::new(args.bind, args.port), args.workers);
    let open = args.open;
    serve(Arc::new(explorer), &options, stop, |addr| {
        let url = format!("http://{addr}/");
        eprintln!("explorer at {url} (Ctrl-C stops it)");
        if open {
            let _ = std::process::Command::new("xdg-open").arg(&url).spawn();
        }
    })
    .map_err(|e| anyhow::anyhow!("serving on {}: {e}", options.addr))?;
    eprintln!("stopped");
    Ok(ExitCode::SUCCESS)
}
