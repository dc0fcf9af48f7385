//! Auditing a book: how far its values are from a deeper search of the same positions,
//! where it matters — on the lines the book plays.
//!
//! **Which positions.** From the walk's start (the start position, or `--from`), every
//! book position reached by following, for both sides, the book moves that score
//! within `error` discs of the position's best option (what the book plays, with some
//! room), each once, at plies `min_ply..=max_ply` (60 − empties), not finished. Each
//! is weighted `1 + log2(1 + games)` (positions the archives played often count more;
//! positions a deviation added weigh 1), and `sample` of them are drawn without
//! replacement by those weights with the seed (Efraimidis–Spirakis keys `u^(1/w)`, `u`
//! a hash of the seed and the position's key): the same book, seed and settings give
//! the same sample, whatever the thread count.
//!
//! **What is measured.** Each position is searched without the book (one thread, a
//! cleared table: deterministic at a depth), and the book's value is compared with the
//! search's score for the side to move: error = value − score. The report gives the
//! mean absolute and mean signed error overall, by ply, by side to move, by whether
//! the value is its own leaf's or backed up from a child, by the level of the leaf
//! that decides the value (the leaf at the end of the book's best line), by the number
//! of book children and by how far below the position that leaf lies — the last two
//! show the winner's curse, a back-up that picks the luckiest of noisy children — and
//! the worst positions with their lines.
//!
//! Searches are kept in a log as they finish, so an audit resumes; the
//! log names the positions and the search, not the book's values, so it also serves
//! the audit of another version of the book with the same sample (after a fix, or
//! with another back-up rule) without searching again.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::board::{Board, Color};
use crate::book::build::leaflog::{LeafLog, LeafLogError};
use crate::book::build::{BuildError, Leaf, LeafSearch};
use crate::book::trust::{decider, Decider};
use crate::book::Book;
use crate::fileio::LockRefused;
use crate::position::Position;
use crate::search::{Settings, Strength};
use crate::setting::{check, OutOfRange, Setting};
use crate::square::{format_moves, Move};

/// What to audit, and how.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AuditConfig {
    /// Positions to audit (at most; fewer when the walk finds fewer).
    pub sample: usize,
    /// Where the walk starts.
    pub from: Position,
    /// Plies (60 − empties) of the positions audited.
    pub min_ply: u32,
    /// ...
    pub max_ply: u32,
    /// The walk follows book moves within this many discs of a position's best option.
    pub error: i32,
    /// How each position is searched, over [`AuditConfig::FALLBACK`].
    pub search: Settings,
    /// Seed of the sample.
    pub seed: u64,
    /// Positions listed among the worst.
    pub worst: usize,
    /// Where the positions come from: the book's lines (`None`), or the positions of
    /// these games (moves from the start, passes included) that the book holds — games
    /// no book was built from are an independent test.
    pub games: Option<Vec<Vec<Move>>>,
    /// A second search of every position, compared with the audit search as the book
    /// is (e.g. the engine's own level 10: is the book worth more than a search?).
    pub compare: Option<Settings>,
}

impl Default for AuditConfig {
    /// 200 positions of plies 10..=30 on lines within 2 discs of the best, from the
    /// start, seed 1, the 10 worst listed, the default search, no comparison.
    fn default() -> AuditConfig {
        AuditConfig {
            sample: 200,
            from: Position::START,
            min_ply: 10,
            max_ply: 30,
            error: 2,
            search: Settings::default(),
            seed: 1,
            worst: 10,
            games: None,
            compare: None,
        }
    }
}

impl AuditConfig {
    /// The audit search where neither an explicit setting nor a level says: level 10
    /// (depth 18 at 2σ, exact from 22 empties).
    pub const FALLBACK: Strength = Strength {
        depth: Some(18),
        exact_at: Some(22),
        time: None,
        nodes: None,
        selectivity: crate::search::Selectivity::from_tenths(20),
    };

    /// The default audit of a book: 200 positions at plies 10–30 on the lines within 2
    /// discs of the best, seed 1, the 10 worst listed.
    pub fn new(search: Settings) -> AuditConfig {
        AuditConfig { search, ..AuditConfig::default() }
    }

    /// Checks the ranges; the error names the setting.
    pub(crate) fn validate(&self) -> Result<(), OutOfRange> {
        check(Setting::Sample, self.sample, 1..=1_000_000)?;
        if self.min_ply > self.max_ply || self.max_ply > 60 {
            return Err(OutOfRange::new(
                Setting::MaxPly,
                self.max_ply,
                format!("from {} to 60 (from the first ply)", self.min_ply),
            ));
        }
        check(Setting::Error, self.error, 0..=64)?;
        check(Setting::Worst, self.worst, 0..=10_000)?;
        Ok(())
    }
}

/// Why an audit failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuditError {
    /// A setting out of range.
    #[error(transparent)]
    Setting(#[from] OutOfRange),
    /// The walk's start is not a book position.
    #[error("the position to audit from is not in the book")]
    NotInBook,
    /// The search settings cannot be used.
    #[error(transparent)]
    Search(#[from] BuildError),
    /// The log of finished searches.
    #[error(transparent)]
    Log(#[from] LeafLogError),
}

/// A position chosen for the audit.
#[derive(Clone, Debug)]
pub(crate) struct Candidate {
    /// The position, as reached from the walk's start.
    pub position: Position,
    /// The moves from the walk's start.
    pub line: Vec<Move>,
    /// Its canonical key.
    pub key: u64,
    /// Games that reached it.
    pub games: u32,
}

impl Candidate {
    /// What is searched: its canonical key and canonical board.
    pub(crate) fn job(&self) -> (u64, Board) {
        (self.key, self.position.board.canonical().0)
    }
}

/// How a book value was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ValueKind {
    /// The position's own leaf (its best move leaving the book).
    Leaf,
    /// Backed up from a book child.
    BackedUp,
}

/// One audited position.
#[derive(Clone, Debug, Serialize)]
pub struct Audited {
    /// Moves from the walk's start.
    pub line: String,
    /// Plies from the start (60 − empties).
    pub ply: u32,
    /// `black` or `white`.
    pub side_to_move: String,
    /// The book's value for the side to move.
    pub value: i32,
    /// The audit search's score for the side to move.
    pub score: i32,
    /// Whether that score is exact.
    pub score_exact: bool,
    /// value − score.
    pub error: i32,
    /// The comparison search's score, if one was asked for.
    pub compare_score: Option<i32>,
    /// Where the value comes from.
    pub kind: ValueKind,
    /// The leaf that decides the value and how far below it lies.
    pub decider: Decider,
    /// Book children.
    pub children: u32,
    /// Games that reached it.
    pub games: u32,
}

/// Errors of a group of positions.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Group {
    /// What the group is.
    pub group: String,
    /// Positions in it.
    pub positions: usize,
    /// Mean absolute error, discs.
    pub mae: f64,
    /// Mean signed error (value − score), discs for the side to move.
    pub bias: f64,
}

impl Group {
    fn of(group: String, errors: impl Iterator<Item = i32>) -> Group {
        let e: Vec<f64> = errors.map(f64::from).collect();
        let n = e.len().max(1) as f64;
        Group {
            group,
            positions: e.len(),
            mae: e.iter().map(|x| x.abs()).sum::<f64>() / n,
            bias: e.iter().sum::<f64>() / n,
        }
    }
}

/// An audit's findings.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct AuditReport {
    /// Positions audited.
    pub positions: usize,
    /// Positions the walk found (the sample's population).
    pub candidates: usize,
    /// Mean absolute error, discs.
    pub mae: f64,
    /// Mean signed error (book value − search), discs for the side to move.
    pub bias: f64,
    /// The audit search, as the book header would describe it.
    pub search: String,
    /// The comparison search's error against the audit search (score − audit score),
    /// named by its settings.
    pub compare: Option<Group>,
    /// With a comparison search: the book's move against the comparison search's move
    /// where they differ, each scored by the audit search of the position it leads to.
    pub decisions: Option<Decisions>,
    /// By ply (groups of 4 plies).
    pub by_ply: Vec<Group>,
    /// By side to move.
    pub by_side: Vec<Group>,
    /// Leaf values against backed-up ones.
    pub by_kind: Vec<Group>,
    /// By the level of the deciding leaf.
    pub by_level: Vec<Group>,
    /// By the number of book children.
    pub by_children: Vec<Group>,
    /// By how far below the position its deciding leaf lies.
    pub by_depth_below: Vec<Group>,
    /// The worst positions (largest absolute error first).
    pub worst: Vec<Audited>,
    /// Every audited position, in the sample's order.
    pub audited: Vec<Audited>,
    /// Searches made by this run (the others came from the log).
    pub searched: usize,
    /// Wall time.
    #[serde(skip)]
    pub elapsed: Duration,
}

/// The book's choices against a search's, position by position: what a player gains by
/// playing the book's best move instead of the move the comparison search finds (the
/// engine's own move at that setting). Both moves are scored by the audit search of
/// the positions they lead to; where the moves agree nothing is searched.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Decisions {
    /// Positions compared (those audited).
    pub positions: usize,
    /// Of those, where the book's move and the search's move differ.
    pub differing: usize,
    /// Where the book's move scores better.
    pub book_better: usize,
    /// Where the search's move scores better.
    pub search_better: usize,
    /// Mean over the differing positions of the book's move's score − the search's
    /// move's score, discs for the side to move (positive: the book chooses better).
    pub mean_gain: f64,
    /// The same over the positions where the book's move is a book move (not its leaf).
    pub book_moves: DecisionGroup,
    /// ... where the book's move is its leaf, the best move leaving the book.
    pub leaf_moves: DecisionGroup,
}

/// [`Decisions`] over a subset of the differing positions.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DecisionGroup {
    /// Differing positions in the subset.
    pub differing: usize,
    /// Mean gain of the book's move over the search's.
    pub mean_gain: f64,
}

/// Progress of an audit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuditEvent {
    /// The file system refused to lock the search log: the run goes on unlocked, and
    /// nothing stops a second run from appending to it (start none).
    LockRefused(LockRefused),
    /// The sample is drawn: `positions` of `candidates`, `resumed` already searched.
    Sampled {
        /// Positions to audit.
        positions: usize,
        /// Positions the walk found.
        candidates: usize,
        /// Searches found in the log.
        resumed: usize,
    },
    /// Searches done (of `total`).
    Searched {
        /// Done.
        done: u64,
        /// To do.
        total: u64,
    },
}

/// The positions to sample from: those of the games the book holds, or those the walk
/// finds, each once (the walk goes breadth first: each with its shortest line).
pub(crate) fn candidates<D: AsRef<[u8]>>(book: &Book<D>, config: &AuditConfig) -> Result<Vec<Candidate>, AuditError> {
    if let Some(games) = &config.games {
        return Ok(game_candidates(book, games, config));
    }
    if book.probe(&config.from.board).is_none() {
        return Err(AuditError::NotInBook);
    }
    let mut seen = HashSet::new();
    let mut queue = VecDeque::from([(config.from, Vec::new())]);
    let mut out = Vec::new();
    while let Some((pos, line)) = queue.pop_front() {
        let Some(hit) = book.probe(&pos.board) else { continue };
        let key = pos.board.canonical().0.key();
        if !seen.insert(key) {
            continue;
        }
        let ply = 60 - pos.board.empty_count();
        if ply > config.max_ply {
            continue;
        }
        if ply >= config.min_ply && !pos.board.is_game_over() {
            out.push(Candidate { position: pos, line: line.clone(), key, games: hit.record.games });
        }
        let options = crate::book::query::book_moves(book, &pos);
        let Some(best) = options.first().map(|m| m.score) else { continue };
        for m in options.iter().filter(|m| m.in_book && m.score >= best - config.error) {
            if let Ok(next) = pos.try_play(m.mv) {
                let mut l = line.clone();
                l.push(m.mv);
                queue.push_back((next, l));
            }
        }
        if pos.board.must_pass() && !pos.board.is_game_over() {
            let mut l = line;
            l.push(Move::Pass);
            queue.push_back((pos.pass(), l));
        }
    }
    Ok(out)
}

/// The positions of `games` at the audited plies that the book holds, each once (with
/// the line of the first game reaching it).
fn game_candidates<D: AsRef<[u8]>>(book: &Book<D>, games: &[Vec<Move>], config: &AuditConfig) -> Vec<Candidate> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for moves in games {
        let mut pos = Position::START;
        for (i, &mv) in moves.iter().enumerate() {
            let ply = 60 - pos.board.empty_count();
            if ply > config.max_ply {
                break;
            }
            if ply >= config.min_ply && pos.board.legal_moves() != 0 {
                let key = pos.board.canonical().0.key();
                if let Some(hit) = book.probe(&pos.board) {
                    if seen.insert(key) {
                        out.push(Candidate { position: pos, line: moves[..i].to_vec(), key, games: hit.record.games });
                    }
                }
            }
            match pos.try_play(mv) {
                Ok(next) => pos = next,
                Err(_) => break,
            }
        }
    }
    out
}

/// The sample: `config.sample` candidates drawn by weight (see the module doc), in
/// key order.
pub(crate) fn sample(candidates: Vec<Candidate>, config: &AuditConfig) -> Vec<Candidate> {
    let mut keyed: Vec<(f64, Candidate)> = candidates
        .into_iter()
        .map(|c| {
            let w = 1.0 + (1.0 + f64::from(c.games)).log2();
            let h = crate::zobrist::mix64(config.seed ^ crate::zobrist::mix64(c.key));
            // u in (0, 1]: 53 bits of the hash.
            let u = ((h >> 11) + 1) as f64 / (1u64 << 53) as f64;
            (u.powf(1.0 / w), c)
        })
        .collect();
    keyed.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.key.cmp(&b.1.key)));
    let mut chosen: Vec<Candidate> = keyed.into_iter().take(config.sample).map(|(_, c)| c).collect();
    chosen.sort_by_key(|c| c.key);
    chosen
}

/// What names an audit's searches in its log: the positions and the search (not the
/// book's values, so that a log serves every book with the same sample: a book and its
/// fixed or re-valued version are audited on the same searches).
pub(crate) fn identity(chosen: &[Candidate], search: &LeafSearch) -> u64 {
    let mut d = crate::fileio::Digest::new();
    for c in chosen {
        d.update(&c.key.to_le_bytes());
    }
    let text = format!("audit 1 positions {} {:016x} {}", chosen.len(), d.finish(), search.identity());
    crate::fileio::Digest::of(text.as_bytes())
}

/// The searches of whole positions (without the book) a run makes before anything
/// else — an audit's, or a fix's checks — for planning them in shards
/// ([`crate::book::cluster::plan::Plan::create_checks`]). The shards' results are assembled into
/// `log`, where the run, started with resume, finds them all and searches nothing
/// again.
pub struct Checks {
    /// Whose searches they are.
    pub kind: ChecksKind,
    /// Each position's canonical key and canonical board, in key order.
    pub positions: Vec<(u64, Board)>,
    /// How each is searched.
    pub(crate) search: LeafSearch,
    /// Where the search's evaluation comes from (a shard loads it again).
    pub eval: crate::eval::EvalSource,
    /// The identity of the run's log (its header names it).
    pub identity: u64,
    /// The run's log.
    pub log: std::path::PathBuf,
}

/// The run [`Checks`] belong to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChecksKind {
    /// An audit ([`audit`]).
    Audit,
    /// A fix's checks ([`super::fix::Fixer`]).
    Fix,
}

/// The searches of an audit of `book` whose checkpoint is `log`. The comparison search
/// (`config.compare`) is not among them: it is an audit of the same sample at its own
/// settings, whose log is `log` with `.compare` appended.
pub fn checks<D: AsRef<[u8]>>(
    book: &Book<D>,
    config: &AuditConfig,
    log: &std::path::Path,
) -> Result<Checks, AuditError> {
    config.validate()?;
    let search = LeafSearch::new(&config.search, AuditConfig::FALLBACK)?;
    let chosen = sample(candidates(book, config)?, config);
    Ok(Checks {
        kind: ChecksKind::Audit,
        positions: chosen.iter().map(Candidate::job).collect(),
        identity: identity(&chosen, &search),
        search,
        eval: config.search.eval.clone(),
        log: log.to_path_buf(),
    })
}

/// Runs an audit of `book`: samples, searches what the log lacks (on the current rayon
/// pool, `search.threads` at a time), and reports. With `log`, finished searches are
/// kept there and an interrupted audit resumes.
pub fn audit<D: AsRef<[u8]> + Sync>(
    book: &Book<D>,
    config: &AuditConfig,
    log: Option<(&std::path::Path, bool)>,
    progress: &(dyn Fn(AuditEvent) + Sync),
) -> Result<AuditReport, AuditError> {
    let start = Instant::now();
    config.validate()?;
    let search = LeafSearch::new(&config.search, AuditConfig::FALLBACK)?;
    let compare = config.compare.as_ref().map(|s| LeafSearch::new(s, AuditConfig::FALLBACK)).transpose()?;
    let found = candidates(book, config)?;
    let population = found.len();
    let chosen = sample(found, config);
    let jobs: Vec<(u64, Board)> = chosen.iter().map(Candidate::job).collect();
    let run = identity(&chosen, &search);
    let (mut scores, mut searched) = search_all(&jobs, &search, run, log, population, progress)?;
    let compared = match &compare {
        Some(c) => {
            let path = log.map(|(p, resume)| {
                let mut name = p.as_os_str().to_owned();
                name.push(".compare");
                (std::path::PathBuf::from(name), resume)
            });
            let log = path.as_ref().map(|(p, r)| (p.as_path(), *r));
            Some(search_all(&jobs, c, identity(&chosen, c), log, population, progress)?.0)
        }
        None => None,
    };
    // The children the compared decisions lead to, searched at the audit's settings
    // into the audit's log (their results depend only on the child and the search).
    let choices: Vec<Choice> = match &compared {
        Some(m) => chosen.iter().filter_map(|c| Choice::of(book, c, &m[&c.key])).collect(),
        None => Vec::new(),
    };
    if !choices.is_empty() {
        let mut children: Vec<(u64, Board)> = choices
            .iter()
            .flat_map(|c| [c.book, c.search])
            .filter(|(key, board)| !board.is_game_over() && !scores.contains_key(key))
            .collect();
        children.sort_unstable_by_key(|&(key, _)| key);
        children.dedup_by_key(|&mut (key, _)| key);
        let log = log.map(|(path, _)| (path, true));
        let (found, more) = search_all(&children, &search, run, log, population, progress)?;
        scores.extend(found);
        searched += more;
    }
    let audited: Vec<Audited> =
        chosen.iter().map(|c| audited(book, c, &scores[&c.key], compared.as_ref().map(|m| &m[&c.key]))).collect();
    let describe = |s: &LeafSearch| format!("{}, exact from {} empties", s.level(), s.params(0, 0).exact_at);
    let mut r = report(audited, population, describe(&search), searched, config.worst, start.elapsed());
    if let Some(c) = &compare {
        let errors = r.audited.iter().filter_map(|a| a.compare_score.map(|s| s - a.score));
        r.compare = Some(Group::of(describe(c), errors));
        r.decisions = Some(Decisions::of(chosen.len(), &choices, &scores));
    }
    Ok(r)
}

/// At one audited position, the book's move and the comparison search's move, as the
/// canonical keys and boards of the positions they lead to (when they differ).
struct Choice {
    book: (u64, Board),
    search: (u64, Board),
    /// Whether the book's move is a book move (else its leaf).
    in_book: bool,
}

impl Choice {
    fn of<D: AsRef<[u8]>>(book: &Book<D>, c: &Candidate, compared: &Leaf) -> Option<Choice> {
        let best = crate::book::query::book_moves(book, &c.position).into_iter().next()?;
        let child = |b: Board| {
            let canonical = b.canonical().0;
            (canonical.key(), canonical)
        };
        let book_child = child(c.position.try_play(best.mv).ok()?.board);
        // The compared search ran on the canonical board: its move is in that orientation.
        let canonical = c.position.board.canonical().0;
        let search_child = match compared.mv.get()? {
            Move::Place(sq) => canonical.play(sq)?,
            Move::Pass => canonical.pass(),
        };
        let search_child = child(search_child);
        (search_child.0 != book_child.0).then_some(Choice {
            book: book_child,
            search: search_child,
            in_book: best.in_book,
        })
    }
}

/// The score of the move leading to `child` for the side that played it.
fn move_score(child: &Board, scores: &HashMap<u64, Leaf>, key: u64) -> i32 {
    if child.is_game_over() {
        return -child.final_score();
    }
    -i32::from(scores[&key].score)
}

impl Decisions {
    fn of(positions: usize, choices: &[Choice], scores: &HashMap<u64, Leaf>) -> Decisions {
        // Each differing decision's gain, and whether the book's move is a book move.
        let gains: Vec<(i32, bool)> = choices
            .iter()
            .map(|c| (move_score(&c.book.1, scores, c.book.0) - move_score(&c.search.1, scores, c.search.0), c.in_book))
            .collect();
        let group = |subset: &dyn Fn(bool) -> bool| {
            let picked: Vec<i32> = gains.iter().filter(|&&(_, in_book)| subset(in_book)).map(|&(g, _)| g).collect();
            DecisionGroup {
                differing: picked.len(),
                mean_gain: picked.iter().map(|&g| f64::from(g)).sum::<f64>() / picked.len().max(1) as f64,
            }
        };
        let all = group(&|_| true);
        Decisions {
            positions,
            differing: all.differing,
            book_better: gains.iter().filter(|&&(g, _)| g > 0).count(),
            search_better: gains.iter().filter(|&&(g, _)| g < 0).count(),
            mean_gain: all.mean_gain,
            book_moves: group(&|in_book| in_book),
            leaf_moves: group(&|in_book| !in_book),
        }
    }
}

/// Every chosen position's search at `search` (from the log where it has it); the
/// number searched now.
fn search_all(
    chosen: &[(u64, Board)],
    search: &LeafSearch,
    identity: u64,
    log: Option<(&std::path::Path, bool)>,
    population: usize,
    progress: &(dyn Fn(AuditEvent) + Sync),
) -> Result<(HashMap<u64, Leaf>, usize), AuditError> {
    let (log, done) = match log {
        Some((path, resume)) => {
            let (l, d) = LeafLog::open(path, identity, search.selectivity_tenths(), resume)?;
            if let Some(refused) = l.lock_refused() {
                progress(AuditEvent::LockRefused(refused));
            }
            (Some(l), d)
        }
        None => (None, HashMap::new()),
    };
    let todo: Vec<&(u64, Board)> = chosen.iter().filter(|(key, _)| !done.contains_key(key)).collect();
    progress(AuditEvent::Sampled {
        positions: chosen.len(),
        candidates: population,
        resumed: chosen.len() - todo.len(),
    });
    let pool = search.pool()?;
    let found = search_logged(&pool, &todo, search, log.as_ref(), &|| false, &|done, total| {
        progress(AuditEvent::Searched { done, total })
    })?;
    let mut scores = done;
    scores.extend(found);
    Ok((scores, todo.len()))
}

/// Searches `jobs` (canonical keys and boards) in full, without the book, on `pool`,
/// through the logged search loop ([`crate::book::build::search::search_logged`]): the loop
/// an audit's searches and a fix's checks share.
pub(crate) fn search_logged(
    pool: &rayon::ThreadPool,
    jobs: &[&(u64, Board)],
    search: &LeafSearch,
    log: Option<&LeafLog>,
    stop: &(dyn Fn() -> bool + Sync),
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Vec<(u64, Leaf)>, BuildError> {
    let key_of = |job: &&(u64, Board)| job.0;
    let score = |job: &&(u64, Board), tt: &mut crate::search::TranspositionTable| {
        crate::book::build::search_position(&job.1, 0, search, tt)
    };
    let none = HashMap::new();
    pool.install(|| {
        crate::book::build::search::search_logged(
            jobs,
            &key_of,
            search,
            &none,
            log.map(LeafLog::file),
            stop,
            &score,
            progress,
        )
    })
}

fn audited<D: AsRef<[u8]>>(book: &Book<D>, c: &Candidate, leaf: &Leaf, compare: Option<&Leaf>) -> Audited {
    let hit = book.probe(&c.position.board).expect("a candidate is a book position");
    let value = hit.value();
    let in_book = c.position.board.successors().filter(|(_, child)| book.probe(child).is_some()).count();
    let children = u32::try_from(in_book).unwrap_or(u32::MAX);
    let decider = decider(book, &c.position.board);
    let kind = if decider.plies_below == 0 { ValueKind::Leaf } else { ValueKind::BackedUp };
    let score = i32::from(leaf.score);
    Audited {
        line: format_moves(&c.line),
        ply: 60 - c.position.board.empty_count(),
        side_to_move: c.position.side.to_string(),
        value,
        score,
        score_exact: leaf.exact,
        error: value - score,
        compare_score: compare.map(|l| i32::from(l.score)),
        kind,
        decider,
        children,
        games: c.games,
    }
}

fn report(
    audited: Vec<Audited>,
    candidates: usize,
    search: String,
    searched: usize,
    worst_count: usize,
    elapsed: Duration,
) -> AuditReport {
    let all = Group::of(String::new(), audited.iter().map(|a| a.error));
    let grouped = |name: &dyn Fn(&Audited) -> (i64, String)| -> Vec<Group> {
        let mut keys: Vec<(i64, String)> = audited.iter().map(name).collect();
        keys.sort();
        keys.dedup();
        keys.into_iter()
            .map(|(k, label)| Group::of(label, audited.iter().filter(|a| name(a).0 == k).map(|a| a.error)))
            .collect()
    };
    let by_ply = grouped(&|a| {
        let lo = a.ply / 4 * 4;
        (i64::from(lo), format!("plies {}-{}", lo, lo + 3))
    });
    let by_side = grouped(&|a| (i64::from(a.side_to_move == Color::White.to_string()), a.side_to_move.clone()));
    let by_kind = grouped(&|a| match a.kind {
        ValueKind::Leaf => (0, "leaf".to_string()),
        ValueKind::BackedUp => (1, "backed up".to_string()),
    });
    let by_level = grouped(&|a| match a.decider.level {
        Some(l) if l.exact => (1000, "exact".to_string()),
        Some(l) => (i64::from(l.depth) * 1000 + i64::from(l.selectivity_tenths), l.to_string()),
        None => (-1, "finished game".to_string()),
    });
    let by_children = grouped(&|a| {
        let c = a.children.min(4);
        (i64::from(c), if c == 4 { "4+ book children".to_string() } else { format!("{c} book children") })
    });
    let by_depth_below = grouped(&|a| {
        let d = a.decider.plies_below.min(8);
        (i64::from(d), if d == 8 { "leaf 8+ plies below".to_string() } else { format!("leaf {d} plies below") })
    });
    let mut worst = audited.clone();
    worst.sort_by_key(|a| std::cmp::Reverse(a.error.abs()));
    AuditReport {
        positions: audited.len(),
        candidates,
        mae: all.mae,
        bias: all.bias,
        search,
        compare: None,
        decisions: None,
        by_ply,
        by_side,
        by_kind,
        by_level,
        by_children,
        by_depth_below,
        worst: worst.into_iter().take(worst_count).collect(),
        audited,
        searched,
        elapsed,
    }
}

#[cfg(test)]
#[path = "audit_tests.rs"]
mod pipeline_tests;
