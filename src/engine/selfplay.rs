//! Self-play games for book builders: the engine plays both sides from an opening line
//! or from the start through a book with random choices, at a fixed level, depth or
//! node budget, one search thread a game and games in parallel.
//!
//! Game `i` depends only on the configuration and `i`: its opening is line
//! `i mod n`, its book choices are drawn from a generator seeded by the seed and `i`,
//! and each game starts from an empty table. So a run can be cut into shards (game
//! ranges) on a cluster, or stopped and resumed, and the games are the same bytes:
//! [`SelfPlayRun`] writes a shard's games to a file, one a line, locked while it
//! runs, and resumes it only under the settings it was started with (recorded beside
//! it field by field, so that a refusal names what changed).

use crate::work::{Shard, StopHandle};
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufWriter, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::game::Game;
use super::{Engine, EngineConfig, EngineError};
use crate::fileio::IoError;
use crate::fileio::{Lock, LockRefused, TryLockFault};
use crate::setting::{OutOfRange, Setting};
use crate::square::{format_moves, Move};

/// How to make self-play games.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SelfPlayConfig {
    /// The engine: its search (level, depth or nodes; one thread), its book and how
    /// it picks book moves (randomness), and the seed.
    pub engine: EngineConfig,
    /// Opening lines: game `i` starts with line `i mod n`. Empty: every game starts at
    /// the start position.
    pub openings: Vec<Vec<Move>>,
    /// Games played at once.
    pub threads: usize,
}

impl Default for SelfPlayConfig {
    fn default() -> Self {
        SelfPlayConfig { engine: EngineConfig::default(), openings: Vec::new(), threads: 1 }
    }
}

/// Why self-play cannot run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SelfPlayError {
    /// The engine cannot be made.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// A time limit makes games depend on the machine's speed.
    #[error("self-play games are reproducible only under a level, depth or node budget, not a time limit")]
    TimeLimit,
    /// An opening line that cannot be played.
    #[error("opening {index}: {source}")]
    Opening {
        /// 1-based line.
        index: usize,
        /// The move that cannot be played.
        source: super::game::GameError,
    },
    /// A caller's handling of a game failed ([`play_games`]).
    #[error("writing the games: {0}")]
    Write(#[from] std::io::Error),
    /// Reading, writing or locking a run's file failed.
    #[error(transparent)]
    Io(#[from] IoError),
    /// A run's games or shards out of range.
    #[error(transparent)]
    Setting(#[from] OutOfRange),
    /// Another run is writing the output (it is locked).
    #[error("{}: another run is writing it (it is locked)", path.display())]
    Locked {
        /// The output.
        path: PathBuf,
    },
    /// The output exists and was not to be resumed.
    #[error("{} exists: resume continues it; to start again, remove it", path.display())]
    Exists {
        /// The output.
        path: PathBuf,
    },
    /// The output cannot be resumed under these settings.
    #[error("{} cannot be resumed: {why}", path.display())]
    Resume {
        /// The output.
        path: PathBuf,
        /// Why.
        why: ResumeFault,
    },
    /// The thread pool.
    #[error("cannot start {threads} threads")]
    Threads {
        /// Threads asked for.
        threads: usize,
        /// Why not.
        source: rayon::ThreadPoolBuildError,
    },
}

/// One finished game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelfPlayGame {
    /// Its index in the run.
    pub index: u64,
    /// The moves from the start, passes included.
    pub moves: Vec<Move>,
    /// Black's final disc difference (empties to the winner).
    pub black_score: i32,
}

impl SelfPlayConfig {
    fn check(&self) -> Result<(), SelfPlayError> {
        if self.engine.search.time.is_some() {
            return Err(SelfPlayError::TimeLimit);
        }
        for (i, line) in self.openings.iter().enumerate() {
            let mut game = Game::default();
            for &mv in line {
                game.play_inferring_pass(mv).map_err(|source| SelfPlayError::Opening { index: i + 1, source })?;
            }
        }
        self.engine.validate()?;
        Ok(())
    }

    /// One engine of a worker: one search thread.
    fn engine(&self) -> Result<Engine, EngineError> {
        let mut config = self.engine.clone();
        config.search.threads = 1;
        config.ponder = false;
        Engine::new(config)
    }

    /// Plays game `index` with `engine`.
    fn play(&self, engine: &mut Engine, index: u64) -> Result<SelfPlayGame, EngineError> {
        engine.new_game();
        engine.reseed(crate::zobrist::mix64(self.engine.seed ^ crate::zobrist::mix64(index)));
        let mut game = Game::default();
        if !self.openings.is_empty() {
            let line = &self.openings[usize::try_from(index).unwrap_or(0) % self.openings.len()];
            for &mv in line {
                game.play_inferring_pass(mv).expect("openings are checked first");
            }
        }
        while !game.is_over() {
            let chosen = engine.choose(&game.position())?;
            game.play(chosen.mv).expect("the engine plays legal moves");
        }
        Ok(SelfPlayGame { index, moves: game.moves(), black_score: game.black_score() })
    }
}

/// Plays the games `range` (in chunks of a few games per thread), calling `on_game`
/// for each in index order; stops between chunks when `stop` is set. Returns the
/// games played.
pub fn play_games(
    config: &SelfPlayConfig,
    range: Range<u64>,
    stop: &StopHandle,
    on_game: &mut dyn FnMut(SelfPlayGame) -> std::io::Result<()>,
) -> Result<u64, SelfPlayError> {
    let stop = stop.flag();
    config.check()?;
    let threads = config.threads.max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|source| SelfPlayError::Threads { threads, source })?;
    let mut engines: Vec<Engine> = (0..threads).map(|_| config.engine()).collect::<Result<_, _>>()?;
    let chunk = 2 * threads as u64;
    let mut next = range.start;
    let mut played = 0;
    while next < range.end && !stop.load(Ordering::Relaxed) {
        let end = (next + chunk).min(range.end);
        let ids: Vec<u64> = (next..end).collect();
        // Each engine plays the games i ≡ k (mod threads) of the chunk.
        let games: Vec<Vec<Result<SelfPlayGame, EngineError>>> = pool.install(|| {
            engines
                .par_iter_mut()
                .enumerate()
                .map(|(k, engine)| ids.iter().skip(k).step_by(threads).map(|&i| config.play(engine, i)).collect())
                .collect()
        });
        let mut ordered: Vec<SelfPlayGame> = games.into_iter().flatten().collect::<Result<_, _>>()?;
        ordered.sort_unstable_by_key(|g| g.index);
        for g in ordered {
            on_game(g)?;
            played += 1;
        }
        next = end;
    }
    Ok(played)
}

/// Why a run's output cannot be resumed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResumeFault {
    /// No record of its settings beside it (`OUTPUT.selfplay`), or one this version does
    /// not read.
    #[error("there is no record of the settings it was written with beside it (or one of an older thorbook)")]
    NoRecord,
    /// It was written under other settings: the first that differs.
    #[error("it was written with another {0}")]
    Differs(SelfPlayInput),
}

/// What a run's games depend on, as a resumed run checks them, in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SelfPlayInput {
    /// The search: depth, exact threshold, width, node budget, table size.
    Search,
    /// The evaluation's weights.
    Evaluation,
    /// The book.
    Book,
    /// How book moves are picked.
    BookChoice,
    /// The seed.
    Seed,
    /// The opening lines.
    Openings,
    /// The games of the shard (the run's games, shards and index).
    Games,
    /// The output format.
    Format,
}

impl SelfPlayInput {
    const ALL: [SelfPlayInput; 8] = [
        SelfPlayInput::Search,
        SelfPlayInput::Evaluation,
        SelfPlayInput::Book,
        SelfPlayInput::BookChoice,
        SelfPlayInput::Seed,
        SelfPlayInput::Openings,
        SelfPlayInput::Games,
        SelfPlayInput::Format,
    ];

    /// Its name in the record beside the output.
    fn name(self) -> &'static str {
        match self {
            SelfPlayInput::Search => "search",
            SelfPlayInput::Evaluation => "evaluation",
            SelfPlayInput::Book => "book",
            SelfPlayInput::BookChoice => "book choice",
            SelfPlayInput::Seed => "seed",
            SelfPlayInput::Openings => "opening lines",
            SelfPlayInput::Games => "game range",
            SelfPlayInput::Format => "output format",
        }
    }
}

impl std::fmt::Display for SelfPlayInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How a run writes its games, chosen by the output's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GameLines {
    /// `f5d6… +4`: the moves and black's disc difference.
    Transcript,
    /// One GGF game a line.
    Ggf,
    /// JSON lines: game, players, black's discs, moves.
    Jsonl,
}

impl GameLines {
    fn of(path: &Path) -> GameLines {
        match path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).as_deref() {
            Some("ggf") => GameLines::Ggf,
            Some("jsonl") => GameLines::Jsonl,
            _ => GameLines::Transcript,
        }
    }

    fn name(self) -> &'static str {
        match self {
            GameLines::Transcript => "transcript",
            GameLines::Ggf => "ggf",
            GameLines::Jsonl => "jsonl",
        }
    }

    fn line(self, g: &SelfPlayGame, engine: &str) -> String {
        let placed: Vec<Move> = g.moves.iter().copied().filter(|m| *m != Move::Pass).collect();
        let black_discs = (64 + g.black_score) / 2;
        match self {
            GameLines::Transcript => format!("{} {:+}", format_moves(&placed), g.black_score),
            GameLines::Jsonl => serde_json::json!({
                "game": g.index,
                "black": engine,
                "white": engine,
                "black_score": black_discs,
                "moves": format_moves(&placed),
            })
            .to_string(),
            GameLines::Ggf => {
                let escape = crate::thor::ggf::escape;
                let mut out = format!(
                    "(;GM[Othello]PC[thorbook selfplay]GN[{}]PB[{}]PW[{}]RE[{:+}]",
                    g.index,
                    escape(engine),
                    escape(engine),
                    g.black_score
                );
                crate::thor::export::ggf_moves(&mut out, &g.moves);
                out
            }
        }
    }
}

/// What a running [`SelfPlayRun`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SelfPlayEvent {
    /// The output already held this many of the shard's games: they are kept.
    Resumed {
        /// Games kept.
        games: u64,
    },
    /// The file system refused to lock the output: the run goes on unlocked, and
    /// nothing stops a second run from appending to it (start none).
    LockRefused(LockRefused),
    /// `done` of the `total` games this run plays are written.
    Played {
        /// Written so far.
        done: u64,
        /// To play in this run.
        total: u64,
    },
}

/// What a run did.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SelfPlaySummary {
    /// The games this run played (indices in the whole run).
    pub played: Range<u64>,
    /// Whether the shard is complete (not stopped).
    pub complete: bool,
    /// Games of this run that repeat none of its others.
    pub distinct: u64,
    /// Black's mean disc difference over this run's games.
    pub black_mean: f64,
    /// Wall time.
    pub elapsed: Duration,
}

/// A self-play run's shard written to a file, one game a line, resumably.
#[derive(Clone, Debug)]
pub struct SelfPlayRun {
    config: SelfPlayConfig,
    games: Range<u64>,
    output: PathBuf,
    resume: bool,
}

impl SelfPlayRun {
    /// The games of `shard` of a run of `games` games (shard `index` of `of` plays games
    /// `games × index / of ..`), written to `output`
    /// (`.ggf`: GGF, `.jsonl`: JSON lines, else transcripts with the result; `{index}`
    /// in its name becomes the shard's index). The shards' outputs, concatenated in
    /// order, are the whole run's.
    pub fn new(config: SelfPlayConfig, games: u64, shard: Shard, output: &Path) -> Result<SelfPlayRun, SelfPlayError> {
        let Shard { index, of: shards } = shard;
        crate::setting::check(Setting::Games, games, 1..=u64::MAX)?;
        crate::setting::check(Setting::Shards, shards, 1..=games)?;
        crate::setting::check(Setting::ShardIndex, index, 0..=shards - 1)?;
        // In u128: games × shards cannot overflow, and the bound is at most `games`.
        let bound = |k: u64| (u128::from(games) * u128::from(k) / u128::from(shards)) as u64;
        let output = PathBuf::from(output.to_string_lossy().replace("{index}", &index.to_string()));
        Ok(SelfPlayRun { config, games: bound(index)..bound(index + 1), output, resume: false })
    }

    /// Continues the games in the output (a run with the same settings that was
    /// stopped); without it an output that holds games is refused.
    pub fn resume(mut self, resume: bool) -> SelfPlayRun {
        self.resume = resume;
        self
    }

    /// The output file (`{index}` replaced).
    pub fn output(&self) -> &Path {
        &self.output
    }

    /// The shard's games (indices in the whole run).
    pub fn games(&self) -> Range<u64> {
        self.games.clone()
    }

    /// The record of the settings beside the output.
    fn record_path(&self) -> PathBuf {
        PathBuf::from(format!("{}.selfplay", self.output.display()))
    }

    /// What the games depend on, field by field, as the record beside the output
    /// keeps it.
    fn identity(&self) -> Result<serde_json::Map<String, serde_json::Value>, SelfPlayError> {
        let engine = &self.config.engine;
        let strength = engine.search.resolve().map_err(EngineError::from)?.strength();
        let eval = engine.search.eval.load().map_err(EngineError::from)?.digest();
        let book = engine.book.open().map_err(EngineError::from)?.map_or(0, |b| b.identity());
        let choice = &engine.book_choice;
        let mut openings = crate::fileio::Digest::new();
        for line in &self.config.openings {
            let bytes: Vec<u8> = line.iter().map(|m| m.square().map_or(64, crate::square::Square::byte)).collect();
            openings.update(&(bytes.len() as u64).to_le_bytes());
            openings.update(&bytes);
        }
        let value = |input: SelfPlayInput| -> serde_json::Value {
            match input {
                SelfPlayInput::Search => serde_json::json!({
                    "depth": strength.depth,
                    "exact_at": strength.exact_at,
                    "selectivity_tenths": strength.selectivity.map(|s| s.tenths()),
                    "nodes": strength.nodes,
                    "hash_mib": engine.search.hash_mib,
                }),
                SelfPlayInput::Evaluation => format!("{eval:08x}").into(),
                SelfPlayInput::Book => format!("{book:016x}").into(),
                SelfPlayInput::BookChoice => {
                    serde_json::json!([choice.randomness, choice.max_loss, choice.max_drop])
                }
                SelfPlayInput::Seed => engine.seed.into(),
                SelfPlayInput::Openings => format!("{:016x}", openings.clone().finish()).into(),
                SelfPlayInput::Games => serde_json::json!([self.games.start, self.games.end]),
                SelfPlayInput::Format => GameLines::of(&self.output).name().into(),
            }
        };
        let mut record = serde_json::Map::new();
        record.insert("format".into(), RECORD_FORMAT.into());
        for input in SelfPlayInput::ALL {
            record.insert(input.name().into(), value(input));
        }
        Ok(record)
    }

    /// Opens the output, locked: the games it holds when resuming (a line cut by an
    /// interruption is removed, to be played again), else none.
    fn open(&self, progress: &(dyn Fn(SelfPlayEvent) + Sync)) -> Result<(File, u64), SelfPlayError> {
        let path = &self.output;
        let io = IoError::at(path);
        let identity = self.identity()?;
        let record_path = self.record_path();
        let existing = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        if existing > 0 && !self.resume {
            return Err(SelfPlayError::Exists { path: path.clone() });
        }
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path).map_err(&io)?;
        match crate::fileio::try_lock(&file) {
            Ok(Lock::Held) => {}
            Ok(Lock::Refused(refused)) => progress(SelfPlayEvent::LockRefused(refused)),
            Err(TryLockFault::Busy) => return Err(SelfPlayError::Locked { path: path.clone() }),
            Err(TryLockFault::Io(e)) => return Err(IoError::new(path, e).into()),
        }
        if existing == 0 {
            let text = serde_json::Value::Object(identity).to_string() + "\n";
            crate::fileio::atomic_write(&record_path, text.as_bytes()).map_err(IoError::at(&record_path))?;
            return Ok((file, 0));
        }
        let resume_fault = |why| SelfPlayError::Resume { path: path.clone(), why };
        let recorded: Option<serde_json::Map<String, serde_json::Value>> =
            std::fs::read_to_string(&record_path).ok().and_then(|t| serde_json::from_str(&t).ok());
        let recorded = recorded
            .filter(|r| r.get("format").and_then(|f| f.as_str()) == Some(RECORD_FORMAT))
            .ok_or(resume_fault(ResumeFault::NoRecord))?;
        if let Some(input) = SelfPlayInput::ALL.into_iter().find(|i| recorded.get(i.name()) != identity.get(i.name())) {
            return Err(resume_fault(ResumeFault::Differs(input)));
        }
        let lines = complete_lines(&file).map_err(&io)?;
        progress(SelfPlayEvent::Resumed { games: lines });
        Ok((file, lines))
    }

    /// Plays the shard's games not yet in the output, appending each (synced every 64
    /// games and at the end); `stop` ends the run between games, keeping what was
    /// played; `progress` is called on this thread.
    pub fn run(
        &self,
        stop: &StopHandle,
        progress: &(dyn Fn(SelfPlayEvent) + Sync),
    ) -> Result<SelfPlaySummary, SelfPlayError> {
        let start = Instant::now();
        self.config.check()?;
        let (file, done) = self.open(progress)?;
        let todo = (self.games.start + done.min(self.games.end - self.games.start))..self.games.end;
        let total = todo.end - todo.start;
        let io = IoError::at(&self.output);
        let mut out = BufWriter::new(&file);
        let lines = GameLines::of(&self.output);
        let engine = &self.config.engine.search;
        let name = match (engine.level, engine.depth) {
            (_, Some(d)) => format!("thorbook depth {d}"),
            (Some(l), None) => format!("thorbook level {}", l.number()),
            (None, None) => "thorbook".to_string(),
        };
        let (mut distinct, mut score_sum, mut written) = (HashSet::new(), 0i64, 0u64);
        let played = play_games(&self.config, todo.clone(), stop, &mut |g| {
            writeln!(out, "{}", lines.line(&g, &name))?;
            distinct.insert(crate::fileio::Digest::of(format_moves(&g.moves).as_bytes()));
            score_sum += i64::from(g.black_score);
            written += 1;
            if written % 64 == 0 {
                out.flush()?;
                out.get_ref().sync_data()?;
            }
            progress(SelfPlayEvent::Played { done: written, total });
            Ok(())
        });
        let flushed = out.flush().and_then(|()| file.sync_data());
        let played = played.map_err(|e| match e {
            SelfPlayError::Write(e) => SelfPlayError::Io(io(e)),
            e => e,
        })?;
        flushed.map_err(&io)?;
        Ok(SelfPlaySummary {
            played: todo.start..todo.start + played,
            complete: todo.start + played == todo.end,
            distinct: distinct.len() as u64,
            black_mean: score_sum as f64 / played.max(1) as f64,
            elapsed: start.elapsed(),
        })
    }
}

/// The record beside a run's output: its format, then each [`SelfPlayInput`].
const RECORD_FORMAT: &str = "thorbook-selfplay-2";

/// The complete lines of a file already written, the file cut after the last one.
fn complete_lines(file: &File) -> std::io::Result<u64> {
    let mut reader = std::io::BufReader::new(file);
    let (mut lines, mut kept) = (0u64, 0u64);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf)?;
        if n == 0 || buf.last() != Some(&b'\n') {
            break;
        }
        lines += 1;
        kept += n as u64;
    }
    // A line cut by an interruption is played again; appends go after what is kept.
    file.set_len(kept)?;
    use std::io::Seek;
    (&*file).seek(std::io::SeekFrom::End(0))?;
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::book::BookSource;
    use crate::search::Settings;

    fn config(seed: u64) -> SelfPlayConfig {
        let engine = EngineConfig {
            search: Settings::default().with_depth(1).with_exact_at(4).with_hash_mib(1),
            book: BookSource::None,
            seed,
            ..EngineConfig::default()
        };
        SelfPlayConfig { engine, openings: vec![vec![Move::Place("f5".parse().unwrap())]], threads: 1 }
    }

    fn run(config: SelfPlayConfig, output: &Path, resume: bool) -> Result<SelfPlaySummary, SelfPlayError> {
        SelfPlayRun::new(config, 4, Shard::new(1, 2), output)?
            .resume(resume)
            .run(&crate::work::StopHandle::new(), &|_| {})
    }

    /// A run refuses what would mix games of two runs in one file: an output another
    /// run holds locked, an existing output not to be resumed, one without a record of
    /// its settings, and one of other settings (naming the first that differs).
    #[test]
    fn a_run_resumes_only_its_own_unlocked_output() {
        let dir = tempfile::tempdir().unwrap();
        let output = dir.path().join("games.{index}.txt");
        let written = dir.path().join("games.1.txt");
        let summary = run(config(3), &output, false).unwrap();
        assert_eq!((summary.played, summary.complete), (2..4, true));
        let text = std::fs::read_to_string(&written).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.lines().all(|l| l.starts_with("f5")), "{text}");

        // Resumed with the same settings: nothing to play, the file unchanged.
        let again = run(config(3), &output, true).unwrap();
        assert_eq!(again.played, 4..4);
        assert_eq!(std::fs::read_to_string(&written).unwrap(), text);

        let fault = |r: Result<SelfPlaySummary, SelfPlayError>| match r {
            Err(SelfPlayError::Resume { why, .. }) => Some(why),
            _ => None,
        };
        assert_eq!(fault(run(config(4), &output, true)), Some(ResumeFault::Differs(SelfPlayInput::Seed)));
        let mut deeper = config(3);
        deeper.engine.search = deeper.engine.search.with_depth(2);
        assert_eq!(fault(run(deeper, &output, true)), Some(ResumeFault::Differs(SelfPlayInput::Search)));
        let mut other_openings = config(3);
        other_openings.openings = vec![vec![Move::Place("d3".parse().unwrap())]];
        assert_eq!(fault(run(other_openings, &output, true)), Some(ResumeFault::Differs(SelfPlayInput::Openings)));
        assert!(matches!(run(config(3), &output, false), Err(SelfPlayError::Exists { .. })));

        // Another run holds the lock.
        let holder = File::open(&written).unwrap();
        holder.lock().unwrap();
        assert!(matches!(run(config(3), &output, true), Err(SelfPlayError::Locked { .. })));
        drop(holder);

        std::fs::remove_file(dir.path().join("games.1.txt.selfplay")).unwrap();
        assert_eq!(fault(run(config(3), &output, true)), Some(ResumeFault::NoRecord));
        assert_eq!(std::fs::read_to_string(&written).unwrap(), text, "a refused run changed the games");
    }

    #[test]
    fn shard_settings_out_of_range_are_refused_by_name() {
        let setting = |games, shards, index| match SelfPlayRun::new(
            config(1),
            games,
            Shard::new(index, shards),
            Path::new("x"),
        ) {
            Err(SelfPlayError::Setting(e)) => Some(e.setting),
            _ => None,
        };
        assert_eq!(setting(0, 1, 0), Some(Setting::Games));
        assert_eq!(setting(3, 4, 0), Some(Setting::Shards));
        assert_eq!(setting(3, 3, 3), Some(Setting::ShardIndex));
        assert_eq!(setting(3, 3, 2), None);
    }
}
