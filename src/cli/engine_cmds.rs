//! `gtp`, `nboard`, `play`, `match`, and the engine options every engine command shares
//! ([`EngineArgs`], converted into a validated [`EngineConfig`]).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, ValueEnum};

use crate::board::Color;
use crate::book::query::BookChoice;
use crate::book::BookSource;
use crate::engine::clock::TimeControl;
use crate::engine::matches::{self, GameRecord, MatchConfig, Outcome, PlayerSpec, Protocol, Side};
use crate::engine::{Engine, EngineConfig};
use crate::search::Settings;
use crate::square::format_moves;

/// Engine options shared by `bestmove`, `analyze`, `gtp`, `nboard`, `play` and `match`'s
/// `self` engines.
#[derive(Args, Debug, Clone, Default)]
pub struct EngineArgs {
    /// How hard to search (default: level 7, one thread, a 64 MiB table).
    #[command(flatten)]
    pub search: super::search_args::SearchArgs,
    /// Opening book consulted before searching (default: the bundled book).
    #[arg(long, conflicts_with = "no_book")]
    pub book: Option<PathBuf>,
    /// Do not consult any book.
    #[arg(long)]
    pub no_book: bool,
    /// Play among book moves within this many discs of the best.
    #[arg(long, default_value_t = 0)]
    pub book_randomness: i32,
    /// Do not play a book move that loses by more than this many discs: search instead.
    #[arg(long, default_value_t = 64)]
    pub book_max_loss: i32,
    /// Leave the book where its best move scores more than this many discs below the
    /// position's stored value (an inconsistent book is not trusted there).
    #[arg(long, default_value_t = crate::book::query::DEFAULT_MAX_DROP)]
    pub book_max_drop: i32,
    /// Seed for --book-randomness (default: from the clock).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Do not think on the opponent's time (pondering is on under a clock in `gtp`,
    /// `nboard` and `play`).
    #[arg(long)]
    pub no_ponder: bool,
}

/// Seconds from the command line, positive: the error names the flag.
fn seconds(value: f64, flag: &str) -> anyhow::Result<Duration> {
    crate::search::settings::seconds(value, false).map_err(|e| anyhow::anyhow!("{flag} {e}"))
}

impl TryFrom<&EngineArgs> for EngineConfig {
    type Error = anyhow::Error;

    /// Turns the options into a configuration; `EngineConfig::validate` checks the
    /// ranges (one place for the library and the command line).
    fn try_from(a: &EngineArgs) -> anyhow::Result<EngineConfig> {
        let book = match (&a.book, a.no_book) {
            (_, true) => BookSource::None,
            (Some(p), false) => BookSource::File(p.clone()),
            (None, false) => BookSource::Bundled,
        };
        let seed = a.seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() ^ u64::from(d.subsec_nanos()) << 32)
        });
        let config = EngineConfig {
            search: a.search.settings(&Settings::default())?,
            book,
            book_choice: BookChoice {
                randomness: a.book_randomness,
                max_loss: a.book_max_loss,
                max_drop: a.book_max_drop,
            },
            seed,
            ponder: !a.no_ponder,
        };
        config.validate().map_err(|e| match e {
            crate::engine::EngineError::Setting(e) => super::flags::out_of_range(&e),
            crate::engine::EngineError::Settings(e) => super::search_args::flag_error(e),
            e => e.into(),
        })?;
        Ok(config)
    }
}

/// Arguments of `thorbook gtp` and `thorbook nboard`.
#[derive(Args, Debug)]
pub struct ProtocolArgs {
    #[command(flatten)]
    pub engine: EngineArgs,
}

pub(super) fn gtp(args: ProtocolArgs) -> anyhow::Result<ExitCode> {
    let mut engine = Engine::new(EngineConfig::try_from(&args.engine)?)?;
    crate::engine::gtp::run(&mut engine, std::io::BufReader::new(std::io::stdin()), std::io::stdout().lock())?;
    Ok(ExitCode::SUCCESS)
}

pub(super) fn nboard(args: ProtocolArgs) -> anyhow::Result<ExitCode> {
    let mut engine = Engine::new(EngineConfig::try_from(&args.engine)?)?;
    crate::engine::nboard::run(
        &mut engine,
        std::io::BufReader::new(std::io::stdin()),
        std::io::stdout().lock(),
        std::io::stderr(),
    )?;
    Ok(ExitCode::SUCCESS)
}

/// The colour a person plays.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ColorArg {
    /// Black moves first.
    Black,
    /// White.
    White,
}

/// Arguments of `thorbook play`.
#[derive(Args, Debug)]
pub struct PlayArgs {
    /// Your colour.
    #[arg(long, value_enum, default_value = "black")]
    pub color: ColorArg,
    /// The engine's game clock, in seconds for all its moves: with no --level or
    /// --depth it deepens to the clock's share for each move.
    #[arg(long)]
    pub clock: Option<f64>,
    #[command(flatten)]
    pub engine: EngineArgs,
}

pub(super) fn play(args: PlayArgs) -> anyhow::Result<ExitCode> {
    let mut engine = Engine::new(EngineConfig::try_from(&args.engine)?)?;
    let human = match args.color {
        ColorArg::Black => Color::Black,
        ColorArg::White => Color::White,
    };
    let control = args.clock.map(|t| seconds(t, "--clock").map(TimeControl::main_only)).transpose()?;
    crate::engine::play::run(
        &mut engine,
        human,
        control,
        std::io::BufReader::new(std::io::stdin()),
        std::io::stdout().lock(),
    )?;
    Ok(ExitCode::SUCCESS)
}

/// A side's moves in a game and the seconds it took for them, as JSON.
fn thinking(r: &GameRecord, side: Side) -> serde_json::Value {
    let moves: Vec<(u32, f64)> =
        r.move_times.iter().filter(|t| t.0 == side).map(|t| (t.1, t.2.as_secs_f64())).collect();
    serde_json::json!({
        "moves": moves.len(),
        "seconds": moves.iter().map(|m| m.1).sum::<f64>(),
        // Where the clock went: each move's empties (before it) and seconds.
        "per_move": moves,
    })
}

/// The protocol of a match engine.
#[derive(Clone, Copy, Debug, ValueEnum, Default)]
pub enum ProtocolArg {
    /// Go Text Protocol (Othello conventions).
    #[default]
    Gtp,
    /// NBoard protocol, version 2.
    Nboard,
}

/// Arguments of `thorbook match`.
#[derive(Args, Debug)]
pub struct MatchArgs {
    /// Engine A: a command line (`"/usr/games/gtp-rhino -l 4"`) or `self` followed by
    /// engine options (`"self --level 5"`).
    #[arg(long)]
    pub a: String,
    /// Engine B, as --a.
    #[arg(long)]
    pub b: String,
    /// Protocol of engine A.
    #[arg(long, value_enum, default_value = "gtp")]
    pub a_protocol: ProtocolArg,
    /// Protocol of engine B.
    #[arg(long, value_enum, default_value = "gtp")]
    pub b_protocol: ProtocolArg,
    /// Games (each opening is played twice, colours swapped).
    #[arg(long, default_value_t = 20)]
    pub games: usize,
    /// Openings file, one move sequence a line (default: the bundled `data/openings.txt`).
    #[arg(long)]
    pub openings: Option<PathBuf>,
    /// Time per move given to the engines, in seconds (GTP `time_settings 0 S 1`).
    #[arg(long, conflicts_with = "clock")]
    pub time_per_move: Option<f64>,
    /// A game clock: seconds for all of each side's moves in a game (GTP
    /// `time_settings S 0 0` and `time_left` before every move; NBoard `TI`). A side
    /// that runs out loses the game on time.
    #[arg(long)]
    pub clock: Option<f64>,
    /// A move slower than this many seconds loses the game (default: 10 × the time per
    /// move + 5, or 120 without one).
    #[arg(long)]
    pub move_timeout: Option<f64>,
    /// Also write every game as JSON lines here (moves, result, forfeits, times).
    #[arg(long)]
    pub games_out: Option<PathBuf>,
}

fn player(command: &str, protocol: ProtocolArg) -> anyhow::Result<PlayerSpec> {
    let words = shlex::split(command).with_context(|| format!("cannot split the engine command `{command}`"))?;
    anyhow::ensure!(!words.is_empty(), "empty engine command");
    let protocol = match protocol {
        ProtocolArg::Gtp => Protocol::Gtp,
        ProtocolArg::Nboard => Protocol::NBoard,
    };
    let (command, name) = if words[0] == "self" {
        let exe = std::env::current_exe().context("cannot find the thorbook executable")?;
        let mode = if protocol == Protocol::Gtp { "gtp" } else { "nboard" };
        // Options the engine would refuse are refused here, before any game is played
        // (otherwise every game is a forfeit by an engine that exited at once).
        let cli = <super::Cli as clap::Parser>::try_parse_from(
            ["thorbook", mode].into_iter().chain(words[1..].iter().map(String::as_str)),
        )
        .map_err(|e| anyhow::anyhow!("engine `{command}`: {}", e.to_string().trim_end()))?;
        if let super::Command::Gtp(args) | super::Command::Nboard(args) = &cli.command {
            EngineConfig::try_from(&args.engine)
                .and_then(|config| config.validate().map_err(anyhow::Error::from))
                .with_context(|| format!("engine `{command}`"))?;
        }
        let mut cmd = vec![exe.to_string_lossy().into_owned(), mode.to_string()];
        cmd.extend(words[1..].iter().cloned());
        let name = if words.len() > 1 { format!("thorbook {}", words[1..].join(" ")) } else { "thorbook".into() };
        (cmd, name)
    } else {
        let name = words.join(" ");
        (words, name)
    };
    Ok(PlayerSpec { command, protocol, name })
}

impl TryFrom<&MatchArgs> for MatchConfig {
    type Error = anyhow::Error;

    fn try_from(a: &MatchArgs) -> anyhow::Result<MatchConfig> {
        let openings = match &a.openings {
            Some(p) => {
                let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
                matches::parse_openings(&text).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?
            }
            None => matches::bundled_openings(),
        };
        let time_per_move = a.time_per_move.map(|t| seconds(t, "--time-per-move")).transpose()?;
        let clock = a.clock.map(|t| seconds(t, "--clock")).transpose()?;
        let move_timeout = match (a.move_timeout, clock) {
            (Some(t), _) => seconds(t, "--move-timeout")?,
            (None, Some(_)) => Duration::from_secs(120),
            (None, None) => time_per_move.map_or(Duration::from_secs(120), |t| t * 10 + Duration::from_secs(5)),
        };
        Ok(MatchConfig {
            a: player(&a.a, a.a_protocol)?,
            b: player(&a.b, a.b_protocol)?,
            games: a.games,
            openings,
            time_per_move,
            clock,
            move_timeout,
        })
    }
}

fn fmt_elo(e: Option<f64>) -> String {
    // Rounded first, then -0 made +0 (IEEE: -0 + 0 is +0): an even match reads "+0".
    e.map_or("inf".into(), |v| format!("{:+.0}", v.round() + 0.0))
}

fn fmt_time(t: Option<Duration>) -> String {
    t.map_or("-".into(), |d| format!("{:.1} ms", d.as_secs_f64() * 1000.0))
}

pub(super) fn run_match(args: MatchArgs) -> anyhow::Result<ExitCode> {
    let config = MatchConfig::try_from(&args)?;
    let mut games_out = match &args.games_out {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?,
        )),
        None => None,
    };
    outln!("A: {}\nB: {}", config.a.name, config.b.name);
    let mut write_error = None;
    let mut print_error = None;
    let summary = matches::run_match(&config, |r| {
        let result = match (&r.forfeit, r.black_score) {
            (Some(f), _) => format!("{} forfeits: {}", if f.side == Side::A { "A" } else { "B" }, f.reason),
            (None, Some(s)) => match s {
                0 => "draw".to_string(),
                s if s > 0 => format!("B+{s}"),
                s => format!("W+{}", -s),
            },
            (None, None) => "?".into(),
        };
        let points = r.a_points();
        let verdict = match r.outcome() {
            Outcome::AWins => "A wins",
            Outcome::Draw => "draw",
            Outcome::BWins => "B wins",
        };
        let printed = {
            use std::io::Write;
            writeln!(
                std::io::stdout().lock(),
                "game {:>3}  opening {:>3}  A {:<5}  {:<8}  {verdict:<6}  {}",
                r.number,
                r.opening + 1,
                r.a_color.to_string(),
                result,
                format_moves(&r.moves)
            )
        };
        // A closed output does not stop the match: --games-out still gets every game.
        if let Err(e) = printed {
            print_error.get_or_insert(e);
        }
        if let Some(w) = games_out.as_mut() {
            use std::io::Write;
            let line = serde_json::json!({
                "game": r.number,
                "opening": r.opening + 1,
                "a_color": r.a_color.to_string(),
                "moves": format_moves(&r.moves),
                "black_score": r.black_score,
                "forfeit": r.forfeit.as_ref().map(|f| serde_json::json!({
                    "side": if f.side == Side::A { "A" } else { "B" }, "reason": f.reason })),
                "a_points": points,
                "a_thinking": thinking(r, Side::A),
                "b_thinking": thinking(r, Side::B),
            });
            // Flushed game by game: an interrupted match keeps every game it finished.
            if let Err(e) = writeln!(w, "{line}").and_then(|()| w.flush()) {
                write_error.get_or_insert(e);
            }
        }
    })
    .map_err(|e| match e {
        matches::MatchError::Setting(e) => super::flags::out_of_range(&e),
        e => e.into(),
    })?;
    if let Some(mut w) = games_out {
        use std::io::Write;
        if let Some(e) = write_error {
            return Err(e).context("writing --games-out");
        }
        w.flush().context("writing --games-out")?;
        w.get_ref().sync_all().context("writing --games-out")?;
    }
    if let Some(e) = print_error {
        return Err(e.into());
    }
    let s = summary;
    outln!(
        "A: {} wins, {} draws, {} losses in {} games (score {:.1}%); forfeits A {}, B {}",
        s.wins,
        s.draws,
        s.losses,
        s.games,
        100.0 * s.score().unwrap_or(0.0),
        s.forfeits.0,
        s.forfeits.1
    );
    if let Some(d) = s.average_disc_diff {
        outln!("A's average disc difference: {d:+.2}");
    }
    outln!("Elo A - B: {} (95% interval {} .. {})", fmt_elo(s.elo.elo), fmt_elo(s.elo.low), fmt_elo(s.elo.high));
    outln!("time per move      >40 empties  21-40 empties  <=20 empties");
    for (name, t) in [("A", s.time_per_move[0]), ("B", s.time_per_move[1])] {
        outln!("  {name}               {:>11}  {:>13}  {:>12}", fmt_time(t[0]), fmt_time(t[1]), fmt_time(t[2]));
    }
    for (name, t) in [("A", s.time_per_game[0]), ("B", s.time_per_game[1])] {
        if let Some(t) = t {
            let clock = config.clock.map_or(String::new(), |c| {
                format!(
                    " of {:.2} s ({:.0}% on average)",
                    c.as_secs_f64(),
                    100.0 * t.mean.as_secs_f64() / c.as_secs_f64()
                )
            });
            outln!("time per game {name}: mean {:.2} s, max {:.2} s{clock}", t.mean.as_secs_f64(), t.max.as_secs_f64());
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::{Level, Strength};

    fn config(f: impl FnOnce(&mut EngineArgs)) -> anyhow::Result<EngineConfig> {
        let mut a = EngineArgs { book_max_loss: 64, book_max_drop: 2, ..EngineArgs::default() };
        a.search.hash_mib = Some(16);
        f(&mut a);
        EngineConfig::try_from(&a)
    }

    #[test]
    fn arguments_become_strengths() {
        assert_eq!(config(|_| {}).unwrap().search.strength(), Strength::level(Level::DEFAULT));
        let c = config(|a| a.search.level = Some(3)).unwrap();
        assert_eq!((c.search.strength().depth, c.search.strength().exact_at), (Some(3), Some(10)));
        let c = config(|a| a.search.time = Some(0.4)).unwrap();
        assert_eq!((c.search.strength().depth, c.search.strength().exact_at), (None, None));
        assert_eq!(c.search.strength().time, Some(Duration::from_millis(400)));
        // The exact threshold follows each move's budget: its own, or a clock's share.
        assert!(c.search.strength().limits_at(18, None).exact && !c.search.strength().limits_at(19, None).exact);
        assert!(c.search.strength().limits_at(22, Some(Duration::from_secs(5))).exact);
        let c = config(|a| {
            a.search.time = Some(0.4);
            a.search.exact_at = Some(12);
        })
        .unwrap();
        assert!(!c.search.strength().limits_at(13, Some(Duration::from_secs(5))).exact, "an explicit threshold stays");
        // A lone depth takes the exact threshold of the level with that depth.
        let c = config(|a| a.search.depth = Some(Level::DEFAULT.spec().depth)).unwrap();
        assert_eq!(c.search.strength(), Strength::level(Level::DEFAULT));
        let c = config(|a| {
            a.search.level = Some(5);
            a.search.exact_at = Some(20);
        })
        .unwrap();
        assert_eq!((c.search.strength().depth, c.search.strength().exact_at), (Some(6), Some(20)));
        let c = config(|a| a.search.exact = true).unwrap();
        assert!((0..=60).all(|e| c.search.strength().limits_at(e, None).exact));
        assert_eq!(config(|a| a.no_book = true).unwrap().book, BookSource::None);
        for bad in [
            config(|a| a.search.time = Some(f64::NAN)),
            config(|a| a.search.time = Some(0.0)),
            config(|a| a.search.nodes = Some(0)),
            config(|a| a.search.level = Some(Level::MAX + 1)),
            config(|a| a.book_randomness = -1),
            config(|a| a.search.hash_mib = Some(0)),
            config(|a| a.search.threads = Some(0)),
            config(|a| a.search.depth = Some(61)),
            config(|a| a.book_max_loss = 65),
        ] {
            assert!(bad.is_err());
        }
    }
}
