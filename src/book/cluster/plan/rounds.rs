//! Growths planned in rounds: a deviation or a deepening whose every round is a plan
//! (`round-NNNN/`), assembled into the round's book, from which the next round is
//! planned; the last writes the output and marks the directory finished.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::{io, PlanError, PlanFault};
use super::spec::{hex, round_dir, to_json, utf8_paths, PlanFile, PlanKind, RoundFile, INPUT_FILE, PLAN_FORMAT};
use super::{check_shards, Assembled, Plan, Work, PLAN_FILE};
use crate::board::Board;
use crate::book::build::checkpoint::positions_digest;
use crate::book::build::nodes::{read_nodes, write_nodes, NODES_FILE};
use crate::book::build::{Leaf, LeafSpec, Node};
use crate::book::grow::{Grower, Growth, GrowthConfig, GrowthError, Next, Round, StopReason};
use crate::book::Book;
use crate::fileio::{atomic_write, read_mapped, Bytes, Digest};

/// The file a rounds directory gets when its growth is over.
pub(super) const FINISHED_FILE: &str = "finished.json";
/// A round's book, in its own directory.
const ROUND_BOOK: &str = "book.tbk";

/// A round's inputs, opened.
pub(super) struct RoundWork {
    pub(super) rounds_dir: PathBuf,
    pub(super) file: RoundFile,
    deviator: Grower,
    pub(super) input: Book<Bytes>,
    pub(super) round: Round,
}

/// How a growth stood when its last round was assembled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Finished {
    /// Rounds run.
    pub rounds: u32,
    /// Why it stopped.
    pub stop: StopReason,
    /// The book written.
    pub output: PathBuf,
}

/// What follows the assembly of a round.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AfterRound {
    /// The next round is planned (`book shard` and `book assemble` of the same
    /// directory run it).
    Next {
        /// Its number.
        number: u32,
        /// Leaves it takes.
        leaves: usize,
        /// Leaf searches it needs.
        searches: usize,
    },
    /// The growth is over and its book written.
    Finished(Finished),
}

/// What planning a growth gives.
#[non_exhaustive]
pub enum Planned {
    /// Its first round.
    Round(Box<Plan>),
    /// Nothing to do: the book (the input with the growth's header) is written.
    Finished(Finished),
}

/// The last round planned in `dir`, if it holds rounds.
pub(super) fn last_round(dir: &Path) -> Result<Option<PathBuf>, PlanError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(dir)(e)),
    };
    let mut last: Option<u32> = None;
    for entry in entries {
        let entry = entry.map_err(io(dir))?;
        let name = entry.file_name();
        let number = name.to_str().and_then(|n| n.strip_prefix("round-")).and_then(|n| n.parse::<u32>().ok());
        if let Some(n) = number {
            if entry.path().join(PLAN_FILE).exists() && last.is_none_or(|l| n > l) {
                last = Some(n);
            }
        }
    }
    Ok(last.map(|n| round_dir(dir, n)))
}

/// The finish of the growth planned in `rounds_dir`, once it is over.
pub(super) fn finished(rounds_dir: &Path) -> Result<Option<Finished>, PlanError> {
    let path = rounds_dir.join(FINISHED_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| PlanError::file(&path, PlanFault::Json(format!("unreadable: {e}")))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(&path)(e)),
    }
}

fn round_digest(identity: &str, round: &RoundFile, nodes: &[Node], shards: u32) -> u64 {
    let mut d = Digest::new();
    d.update(PLAN_FORMAT.as_bytes());
    d.update(b"round");
    d.update(identity.as_bytes());
    for v in [round.number as u64, round.leaves_before as u64, round.leaves as u64] {
        d.update(&v.to_le_bytes());
    }
    d.update(&round.max_positions.map_or(u64::MAX, |m| m as u64).to_le_bytes());
    d.update(&positions_digest(nodes).to_le_bytes());
    d.update(&shards.to_le_bytes());
    d.finish()
}

fn opened_book(path: &Path) -> Result<Book<Bytes>, PlanError> {
    let bytes = read_mapped(path).map_err(io(path))?;
    Book::open(bytes).map_err(|e| PlanError::file(path, PlanFault::Book(e)))
}

impl Plan {
    /// Plans a deviation or a deepening (`config.growth`) of the book at `input`, from
    /// position `from`, in rounds of `shards` shards each in `dir` (created if needed):
    /// the input is copied to `dir/input.tbk` and the first round planned into
    /// `dir/round-0001`. Each round's assembly plans the next from its book; the last
    /// one writes `output`. The rounds compute exactly what
    /// [`Grower::run`] does locally with the same settings. A time limit is refused
    /// (the result would depend on the machines). Planning the same growth again is a
    /// no-op that returns the current round.
    pub fn create_rounds<D: AsRef<[u8]>>(
        dir: &Path,
        book: &Book<D>,
        config: GrowthConfig,
        from: Board,
        shards: u32,
        output: &Path,
    ) -> Result<Planned, PlanError> {
        let plan_path = dir.join(PLAN_FILE);
        let bad = |fault: PlanFault| PlanError::file(&plan_path, fault);
        check_shards(shards)?;
        if config.time.is_some() {
            return Err(bad(PlanFault::TimeLimit));
        }
        utf8_paths(&[dir, output])?;
        let output = std::path::absolute(output).unwrap_or_else(|_| output.to_path_buf());
        // Every setting is checked (the leaf search's too) before the book is read
        // through or anything written.
        let deviator = Grower::new(config, from, &output);
        let search = deviator.leaf_search(book)?;
        book.verify().map_err(|e| bad(PlanFault::InputBook(e)))?;
        if book.probe(&from).is_none() {
            return Err(PlanError::Growth(GrowthError::NotInBook));
        }
        let input = dir.join(INPUT_FILE);
        let first = round_dir(dir, 1);
        if first.join(PLAN_FILE).exists() {
            let existing = Plan::open_dir(&first)?;
            let Work::Round(r) = &existing.work else {
                return Err(PlanError::file(&first.join(PLAN_FILE), PlanFault::NotARound));
            };
            let same = r.file.input_digest == hex(book.identity())
                && r.deviator.identity(book, &search) == deviator.identity(book, &search)
                && r.file.max_positions == deviator.config().max_positions
                && existing.file.shards == shards
                && r.file.book == output;
            if !same {
                return Err(bad(PlanFault::OtherPlan));
            }
            return Ok(Planned::Round(Box::new(Plan::open(dir)?)));
        }
        if dir.join(PLAN_FILE).exists() || dir.join(INPUT_FILE).exists() {
            return Err(bad(match finished(dir)? {
                Some(f) => PlanFault::FinishedGrowth(f.output),
                None => PlanFault::OtherPlan,
            }));
        }
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        atomic_write(&input, book.bytes()).map_err(io(&input))?;
        let book = opened_book(&input)?;
        let next = deviator.next_round(&book, &search, &Default::default(), 0)?;
        match next {
            Next::Round(round) => {
                let plan = Plan::write_round(dir, 1, INPUT_FILE.as_ref(), &book, &deviator, &search, round, 0, shards)?;
                Ok(Planned::Round(Box::new(plan)))
            }
            Next::Stop(stop) => {
                deviator.unchanged(&book, &search, &output)?;
                Ok(Planned::Finished(finish(dir, 0, stop, &output, None)?))
            }
        }
    }

    /// Writes the plan of round `number` into its directory.
    #[allow(clippy::too_many_arguments)]
    fn write_round(
        rounds_dir: &Path,
        number: u32,
        input_rel: &Path,
        input: &Book<Bytes>,
        deviator: &Grower,
        search: &LeafSpec,
        round: Round,
        leaves_before: usize,
        shards: u32,
    ) -> Result<Plan, PlanError> {
        let dir = round_dir(rounds_dir, number);
        let c = deviator.config();
        let nodes: Vec<Node> =
            round.jobs.iter().map(|&(key, board)| Node { key, board, games: 0, wins: 0, draws: 0 }).collect();
        let from = deviator.from();
        let round_file = RoundFile {
            growth: c.growth,
            number,
            input: input_rel.to_path_buf(),
            input_digest: hex(input.identity()),
            from_player: hex(from.player),
            from_opponent: hex(from.opponent),
            error: c.error,
            budget: c.budget,
            contempt: c.contempt,
            max_ply: c.max_ply,
            round_size: c.round_size,
            max_positions: c.max_positions,
            leaves_before,
            leaves: round.leaves,
            book: deviator.output().to_path_buf(),
        };
        let identity = deviator.identity(input, search);
        let digest = round_digest(&identity, &round_file, &nodes, shards);
        let p = input.params();
        let output = std::path::absolute(dir.join(ROUND_BOOK)).unwrap_or_else(|_| dir.join(ROUND_BOOK));
        let file = PlanFile {
            max_ply: p.max_ply.into(),
            min_games: p.min_games,
            // A round's assembly backs up through the growth, which keeps the input's rule.
            back_up: p.back_up,
            round: Some(round_file),
            ..PlanFile::searched(
                PlanKind::Round,
                shards,
                output,
                search,
                &c.search.eval,
                nodes.len(),
                positions_digest(&nodes),
                digest,
            )
        };
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        write_nodes(&dir.join(NODES_FILE), &nodes)?;
        let plan_path = dir.join(PLAN_FILE);
        let json = to_json(&file, &plan_path)?;
        atomic_write(&plan_path, json.as_bytes()).map_err(io(&plan_path))?;
        Plan::open_dir(&dir)
    }

    /// Opens a round's plan: its input book (which must be the one it was planned
    /// from), the growth's settings, its searches.
    pub(super) fn open_round(
        dir: &Path,
        file: PlanFile,
        rf: RoundFile,
        nodes: Vec<Node>,
        search: LeafSpec,
    ) -> Result<Plan, PlanError> {
        let plan_path = dir.join(PLAN_FILE);
        let bad = |fault: PlanFault| PlanError::file(&plan_path, fault);
        let rounds_dir = dir.parent().map(Path::to_path_buf).unwrap_or_default();
        let input_path = rounds_dir.join(&rf.input);
        let input = opened_book(&input_path)?;
        if hex(input.identity()) != rf.input_digest {
            return Err(PlanError::file(&input_path, PlanFault::NotInputBook(rf.number)));
        }
        let hex_u64 = |t: &str| u64::from_str_radix(t, 16).map_err(|_| bad(PlanFault::DigestMismatch));
        let from = Board::new(hex_u64(&rf.from_player)?, hex_u64(&rf.from_opponent)?)
            .ok_or_else(|| bad(PlanFault::DigestMismatch))?;
        let config = GrowthConfig {
            error: rf.error,
            budget: rf.budget,
            contempt: rf.contempt,
            max_positions: rf.max_positions,
            time: None,
            max_ply: rf.max_ply,
            search: crate::search::Settings { eval: file.eval.source(), ..Default::default() },
            growth: rf.growth,
            round_size: rf.round_size,
        };
        config.validate()?;
        let deviator = Grower::new(config, from, &rf.book);
        let identity = deviator.identity(&input, &search);
        let digest = round_digest(&identity, &rf, &nodes, file.shards);
        if hex(digest) != file.digest || nodes.len() != file.positions {
            return Err(bad(PlanFault::DigestMismatch));
        }
        let jobs = nodes.iter().map(|n| (n.key, n.board)).collect();
        let keys: Vec<u64> = nodes.iter().map(|n| n.key).collect();
        let round = Round { leaves: rf.leaves, jobs };
        let work = Work::Round(Box::new(RoundWork { rounds_dir, file: rf, deviator, input, round }));
        Ok(Plan { dir: dir.to_path_buf(), file, keys: std::sync::OnceLock::from(keys), search, digest, work })
    }

    /// Writes a round's book into its directory and plans the next round, or finishes.
    pub(super) fn assemble_round(
        &self,
        r: &RoundWork,
        leaves: &[Leaf],
        output: Option<&Path>,
    ) -> Result<Assembled, PlanError> {
        let book_path = self.dir.join(ROUND_BOOK);
        // Opening the plan named its input by header and block checksums; the
        // assembly reads every record of it, so it checks them against those.
        let input_path = r.rounds_dir.join(&r.file.input);
        r.input.verify().map_err(|e| PlanError::file(&input_path, PlanFault::InputBook(e)))?;
        let written = r.deviator.finish_round(&r.input, &self.search, &r.round, leaves, &book_path)?;
        let book = opened_book(&book_path)?;
        let (positions, size) = (written.positions, written.bytes);
        let number = r.file.number;
        let next_dir = round_dir(&r.rounds_dir, number + 1);
        // Assembling again after the next round was planned replans nothing.
        if next_dir.join(PLAN_FILE).exists() {
            let next = Plan::open_dir(&next_dir)?;
            let after =
                AfterRound::Next { number: number + 1, leaves: next.round_leaves(), searches: next.positions() };
            return Ok(Assembled { positions, size, after: Some(after) });
        }
        let mut tried = std::collections::BTreeSet::new();
        if r.deviator.config().growth == Growth::Deepen {
            for n in 1..=number {
                read_nodes(&round_dir(&r.rounds_dir, n).join(NODES_FILE), &mut |node| {
                    tried.insert(node.key);
                })?;
            }
        }
        let added = r.file.leaves_before + r.file.leaves;
        let after = match r.deviator.next_round(&book, &self.search, &tried, added)? {
            Next::Round(round) => {
                let rel = PathBuf::from(format!("round-{number:04}")).join(ROUND_BOOK);
                let next = Plan::write_round(
                    &r.rounds_dir,
                    number + 1,
                    &rel,
                    &book,
                    &r.deviator,
                    &self.search,
                    round,
                    added,
                    self.file.shards,
                )?;
                AfterRound::Next { number: number + 1, leaves: next.round_leaves(), searches: next.positions() }
            }
            Next::Stop(stop) => {
                let out = output.unwrap_or(&r.file.book);
                AfterRound::Finished(finish(&r.rounds_dir, number, stop, out, Some(book.bytes()))?)
            }
        };
        Ok(Assembled { positions, size, after: Some(after) })
    }

    fn round_leaves(&self) -> usize {
        match &self.work {
            Work::Round(r) => r.round.leaves,
            Work::Build | Work::Checks(_) => 0,
        }
    }
}

/// Writes a growth's book (`bytes`, unless it is written already) and marks its rounds
/// directory finished.
fn finish(
    rounds_dir: &Path,
    rounds: u32,
    stop: StopReason,
    output: &Path,
    bytes: Option<&[u8]>,
) -> Result<Finished, PlanError> {
    if let Some(bytes) = bytes {
        atomic_write(output, bytes).map_err(io(output))?;
    }
    let done = Finished { rounds, stop, output: output.to_path_buf() };
    let path = rounds_dir.join(FINISHED_FILE);
    let json = to_json(&done, &path)?;
    atomic_write(&path, json.as_bytes()).map_err(io(&path))?;
    Ok(done)
}

/// A growth's error as a plan's: its settings, searches and files as a build's.
impl From<GrowthError> for PlanError {
    fn from(e: GrowthError) -> PlanError {
        match e {
            GrowthError::Search(e) => PlanError::Build(e),
            GrowthError::Setting(e) => PlanError::Setting(e),
            GrowthError::Io(e) => PlanError::Io(e),
            GrowthError::Book(e) => PlanError::Build(e.into()),
            e => PlanError::Growth(e),
        }
    }
}
