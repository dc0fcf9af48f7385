//! [`ThorDatabase`]: game archives loaded together (WTHOR files and the text formats
//! of [`super::text`], mixed freely), games replayed and validated, names joined, and
//! every position indexed by its canonical key so that "which games reach
//! this position" and its statistics are answered by a binary search.
//!
//! The index holds one 16-byte entry per position of every game (about 7.4 million
//! for the 115,820 games of 1977–2015): the position's key (canonical over the 8
//! symmetries, with the colour to move mixed in so that colour-swapped boards stay
//! apart), the game, the ply, the transform onto the canonical image and the move the
//! game played next. Statistics therefore need no replay. A false match needs a 64-bit
//! key collision with the query: about one chance in 2^64 / 7.4e6 ≈ 2.5e12 per query.

use std::cmp::Ordering;

use rayon::prelude::*;
use serde::Serialize;

use std::collections::{BTreeMap, HashMap};
use std::io::Read;

use super::format::{decode_name, FileKind, Header, RawGame, Records, ThorFile};
use super::replay::{decode_moves, replay_with, validate, Outcome, Replay};
use super::source::{Compression, Source, SourceFormat};
use super::text::{self, join_names, SkipReason, TextFile, TextFormat};
use super::{Anomaly, AnomalyKind, IoStep, ThorError};
use crate::board::Color;
use crate::position::Position;
use crate::square::{Move, Square};
use crate::symmetry::Transform;
use crate::zobrist::WHITE_TO_MOVE;

mod stats;
pub use stats::{MoveStats, PositionStats};

/// How to treat damaged input.
#[derive(Clone, Copy, Debug, Default)]
#[non_exhaustive]
pub struct LoadOptions {
    /// Fail on the first anomaly instead of skipping the file or game.
    pub strict: bool,
    /// Build the position index now (position filters and statistics build it when
    /// they first need it otherwise).
    pub index: bool,
}

impl LoadOptions {
    /// These options, failing on the first anomaly when `strict`.
    pub fn with_strict(self, strict: bool) -> LoadOptions {
        LoadOptions { strict, ..self }
    }

    /// These options, building the position index when `index`.
    pub fn with_index(self, index: bool) -> LoadOptions {
        LoadOptions { index, ..self }
    }
}

/// A replayed, valid game with where it came from and what its source says of it.
///
/// Every source gives the moves. The rest depends on the source: WTHOR gives all of
/// it; GGF players, place and date; a transcript at most a result. What a source does
/// not give is `None` (or 0 for `year` and `depth`), never a made-up value.
#[derive(Clone, Copy, Debug)]
pub struct ThorGame {
    /// Index of its file in [`ThorDatabase::files`].
    pub file: u32,
    /// 0-based record index in a WTHOR file; 1-based line of a text file.
    pub record: u32,
    /// Year of the game; 0 when the source does not say.
    pub year: u16,
    /// Empties at which the theoretical score was computed (P3); 0 when there is none.
    pub depth: u8,
    /// Black's name: an index into [`ThorDatabase::players`].
    pub black: Option<u32>,
    /// White's name.
    pub white: Option<u32>,
    /// The tournament (GGF: the place, e.g. `GGS/os`): an index into
    /// [`ThorDatabase::tournaments`].
    pub tournament: Option<u32>,
    /// Whether `raw.black_score` is a result: stated by the source or read off a
    /// finished board.
    pub result_known: bool,
    /// The moves and scores in WTHOR's encoding. For a WTHOR game, the record as
    /// stored (its ids too); for a text game the ids are 0 and unknown scores 32.
    pub(crate) raw: RawGame,
    /// The replay.
    pub(crate) replay: Replay,
}

impl ThorGame {
    /// Black's discs at the end (empties to the winner), when known.
    pub fn black_discs(&self) -> Option<u8> {
        self.result_known.then_some(self.raw.black_score)
    }

    /// Black's discs under perfect play from the position with `depth` empties, when
    /// the source has it.
    pub fn theoretical_discs(&self) -> Option<u8> {
        (self.depth > 0).then_some(self.raw.theoretical_score)
    }

    /// How its move list ends: the game finished, ended early, or unfinished.
    pub fn outcome(&self) -> Outcome {
        self.replay.outcome
    }

    /// The passes the replay inferred (WTHOR stores none).
    pub fn passes(&self) -> u8 {
        self.replay.passes
    }

    /// The moves stored (passes not counted).
    pub fn move_count(&self) -> u8 {
        self.replay.move_count
    }

    /// The position after the last move.
    pub fn final_position(&self) -> Position {
        self.replay.last
    }

    /// The year, when the source gives one.
    pub fn known_year(&self) -> Option<u16> {
        (self.year > 0).then_some(self.year)
    }

    /// The moves including inferred passes, from the start.
    pub fn moves_with_passes(&self) -> Vec<Move> {
        let mut out = Vec::with_capacity(64);
        // Already validated at load, so replay cannot fail here.
        let _ = replay_with(&self.raw, |_, mv| out.extend(mv));
        out
    }

    /// Replays the game, calling `visit(position, move)` for every position it passes
    /// through with the move played from it (`None` for the last position).
    pub(crate) fn visit_positions(&self, visit: impl FnMut(&Position, Option<Move>)) {
        // Already validated at load, so replay cannot fail here.
        let _ = replay_with(&self.raw, visit);
    }

    /// The stored moves (no passes) as `f5d6c3…`: read off the move bytes, which
    /// hold no passes, without a replay.
    pub fn transcript(&self) -> String {
        // Already validated at load, so the bytes decode.
        let moves: Vec<Move> = match decode_moves(&self.raw) {
            Ok((squares, len)) => squares[..len].iter().map(|&sq| Move::Place(sq)).collect(),
            Err(_) => Vec::new(),
        };
        crate::square::format_moves(&moves)
    }
}

/// What one file contributed.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct FileSummary {
    /// Name as given.
    pub name: String,
    /// What the file holds.
    pub format: SourceFormat,
    /// How it was compressed.
    pub compression: Compression,
    /// Kind of WTHOR file (`Games` for a text file).
    pub kind: FileKind,
    /// Its header (for a text file, a made-up one: year 0, P3 0).
    pub header: Header,
    /// Records read.
    pub records: usize,
    /// Games loaded (valid).
    pub games: usize,
    /// Finished with a full board.
    pub finished: usize,
    /// Finished before 60 moves.
    pub finished_early: usize,
    /// Unfinished.
    pub unfinished: usize,
    /// Anomalies found in this file.
    pub anomalies: usize,
    /// Sound games left out, by reason (10×10 boards, random starts, …).
    #[serde(serialize_with = "reasons_as_text")]
    pub skipped: BTreeMap<SkipReason, usize>,
}

/// One index entry: a position of a game.
#[derive(Clone, Copy, Debug)]
struct IndexEntry {
    key: u64,
    game: u32,
    /// Plies (moves and passes) played before this position.
    ply: u8,
    /// Code of the transform from the game's orientation onto the canonical image.
    transform: u8,
    /// Next move in the game's orientation: square index, 64 for a pass, 255 at the end.
    next: u8,
}

const NEXT_PASS: u8 = 64;
const NEXT_END: u8 = 255;

/// The key under which a position is indexed, and the transform onto its canonical image.
pub(crate) fn position_key(pos: &Position) -> (u64, Transform) {
    let (canon, t) = pos.board.canonical();
    let side = if pos.side == Color::White { WHITE_TO_MOVE } else { 0 };
    (canon.key() ^ side, t)
}

/// A game of a [`ThorDatabase`]: its place in [`ThorDatabase::games`], valid for the
/// database that gave it until [`ThorDatabase::retain`] changes which games it holds.
/// It carries the stamp of the database (and of the set of games) it was made for, so
/// that [`ThorDatabase::game`] answers `None` to an id of another database instead of
/// the wrong game or a panic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GameId {
    index: u32,
    stamp: Stamp,
}

impl GameId {
    /// Its index into [`ThorDatabase::games`].
    pub fn index(self) -> usize {
        self.index as usize
    }
}

/// Which database, and which set of its games, a [`GameId`] belongs to: a number no
/// other database of the process has had (a clone shares it, holding the same games).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Stamp(u64);

impl Default for Stamp {
    fn default() -> Stamp {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        Stamp(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

/// A game reaching a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reach {
    /// The game.
    pub game: GameId,
    /// Plies (moves and passes) the game had played when it got there.
    pub ply: u8,
    /// The move it played next, in the query's orientation; `None` where its move list ends.
    pub next: Option<Move>,
}

/// Loaded, validated, indexed WTHOR data.
#[derive(Clone, Default)]
pub struct ThorDatabase {
    // Read through accessors: the position index refers to games by their place, so
    // only `retain`, which rebuilds it, may change which games there are.
    pub(crate) files: Vec<FileSummary>,
    pub(crate) games: Vec<ThorGame>,
    pub(crate) players: Vec<String>,
    pub(crate) tournaments: Vec<String>,
    pub(crate) anomalies: Vec<Anomaly>,
    /// Built by `load` when asked, else by the first query that needs it.
    index: std::sync::OnceLock<Vec<IndexEntry>>,
    /// What the ids of the games held now carry.
    stamp: Stamp,
    /// Name to id in `players` and `tournaments`, for text sources.
    player_ids: HashMap<String, u32>,
    tournament_ids: HashMap<String, u32>,
    /// Names read from `.JOU` and `.TRN`: the ids WTHOR games may use.
    pub(super) wthor_players: usize,
    pub(super) wthor_tournaments: usize,
}

impl FileSummary {
    /// Counts a loaded game by how its move list ends.
    fn count(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Finished => self.finished += 1,
            Outcome::FinishedEarly => self.finished_early += 1,
            Outcome::Unfinished => self.unfinished += 1,
        }
    }
}

fn reasons_as_text<S: serde::Serializer>(map: &BTreeMap<SkipReason, usize>, s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(map.iter().map(|(reason, n)| (reason.to_string(), n)))
}

/// What a source yields before its games are joined to the database.
enum Parsed {
    Wthor(Compression, Result<(ThorFile, Vec<Anomaly>), Anomaly>),
    Text(String, Compression, TextFormat, TextFile),
}

fn parse_source(s: &Source) -> Result<Parsed, Anomaly> {
    let (format, compression) = s.format()?;
    Ok(match (format, compression) {
        (SourceFormat::Wthor, Compression::None) => Parsed::Wthor(compression, ThorFile::parse(&s.name, s.bytes())),
        (SourceFormat::Wthor, _) => {
            let mut bytes = Vec::new();
            if let Err(e) = s.reader(compression).and_then(|mut r| r.read_to_end(&mut bytes)) {
                return Err(Anomaly::file(&s.name, AnomalyKind::io(IoStep::Decompress, &e)));
            }
            Parsed::Wthor(compression, ThorFile::parse(&s.name, &bytes))
        }
        (SourceFormat::Text(t), _) => {
            let input = s.reader(compression).map_err(|e| Anomaly::file(&s.name, AnomalyKind::io(IoStep::Read, &e)))?;
            Parsed::Text(s.name.clone(), compression, t, text::read(&s.name, t, input))
        }
    })
}

/// Which games to select.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct GameFilter {
    /// Case-insensitive substring of a player's name.
    pub player: Option<String>,
    /// Colour the player must have had (`None`: either).
    pub player_color: Option<Color>,
    /// Case-insensitive substring of the tournament name.
    pub tournament: Option<String>,
    /// Inclusive range of years.
    pub years: Option<(u16, u16)>,
    /// Games that reach this position, under any symmetry and in any move order.
    pub position: Option<Position>,
}

#[cfg(any(feature = "explorer", test))]
/// A range of years as `thorbook thor --years` and the explorer's `years` parameter
/// spell it: `1990..2000` (inclusive), `1990`, `1990..`, `..2000`.
pub(crate) fn parse_years(s: &str) -> Result<(u16, u16), String> {
    let bad = || format!("`{s}` is not a year range (1990..2000, 1990, 1990.., ..2000)");
    let year = |t: &str, default: u16| -> Result<u16, String> {
        if t.is_empty() {
            Ok(default)
        } else {
            t.trim().parse().map_err(|_| bad())
        }
    };
    let (lo, hi) = match s.split_once("..") {
        Some((a, b)) => (year(a, 0)?, year(b.trim_start_matches('='), u16::MAX)?),
        None => {
            let y = year(s, 0)?;
            (y, y)
        }
    };
    if lo > hi {
        return Err(bad());
    }
    Ok((lo, hi))
}

impl ThorDatabase {
    /// Loads sources (files' bytes, any format, recognised by content), validating and
    /// replaying every game in parallel.
    pub fn load(sources: &[Source], opts: LoadOptions) -> Result<ThorDatabase, ThorError> {
        let parsed: Vec<_> = sources.par_iter().map(parse_source).collect();
        let mut db = ThorDatabase::default();
        let mut files = Vec::new();
        for result in parsed {
            match result {
                Ok(Parsed::Wthor(c, Ok((file, anomalies)))) => {
                    if let (true, Some(a)) = (opts.strict, anomalies.first()) {
                        return Err(a.clone().into());
                    }
                    files.push(Parsed::Wthor(c, Ok((file, anomalies))));
                }
                Ok(Parsed::Wthor(_, Err(a))) | Err(a) if opts.strict => return Err(a.into()),
                Ok(Parsed::Wthor(_, Err(a))) | Err(a) => db.anomalies.push(a),
                Ok(Parsed::Text(_, _, _, text)) if opts.strict && !text.anomalies.is_empty() => {
                    return Err(text.anomalies[0].clone().into())
                }
                Ok(text) => files.push(text),
            }
        }
        for parsed in &files {
            let Parsed::Wthor(_, Ok((file, _))) = parsed else { continue };
            let target = match file.kind {
                FileKind::Players => &mut db.players,
                FileKind::Tournaments => &mut db.tournaments,
                _ => continue,
            };
            if let (true, Records::Names(names)) = (target.is_empty(), &file.records) {
                *target = names.iter().map(|n| decode_name(n)).collect();
            }
        }
        (db.wthor_players, db.wthor_tournaments) = (db.players.len(), db.tournaments.len());
        // A name given twice in a name file keeps its first id.
        let index = |names: &[String]| -> HashMap<String, u32> {
            names.iter().zip(0..u32::MAX).rev().map(|(name, id)| (name.clone(), id)).collect()
        };
        (db.player_ids, db.tournament_ids) = (index(&db.players), index(&db.tournaments));
        for parsed in files {
            match parsed {
                Parsed::Wthor(c, Ok((file, anomalies))) => db.add_file(file, c, anomalies, opts.strict)?,
                Parsed::Text(name, c, format, text) => db.add_text_file(&name, c, format, text),
                Parsed::Wthor(_, Err(_)) => {}
            }
        }
        if opts.index {
            db.build_index();
        }
        Ok(db)
    }

    fn add_text_file(&mut self, name: &str, compression: Compression, format: TextFormat, mut text: TextFile) {
        let file_index = u32::try_from(self.files.len()).expect("fewer than 2^32 files");
        let mut summary = FileSummary {
            name: name.to_string(),
            format: SourceFormat::Text(format),
            compression,
            kind: FileKind::Games,
            header: Header::new(0, 0),
            records: text.games.len() + text.anomalies.len() + text.skipped.values().sum::<usize>(),
            games: text.games.len(),
            finished: 0,
            finished_early: 0,
            unfinished: 0,
            anomalies: text.anomalies.len(),
            skipped: text.skipped,
        };
        join_names(
            &mut text.games,
            (&text.names, &text.events),
            (&mut self.player_ids, &mut self.players),
            (&mut self.tournament_ids, &mut self.tournaments),
        );
        for g in &mut text.games {
            summary.count(g.replay.outcome);
            g.file = file_index;
        }
        if self.games.is_empty() {
            self.games = text.games;
        } else {
            self.games.append(&mut text.games);
        }
        self.anomalies.extend(text.anomalies);
        self.files.push(summary);
    }

    /// Checks a game's ids against the name files, when they were loaded.
    fn id_anomalies(&self, raw: &RawGame) -> Vec<AnomalyKind> {
        let mut out = Vec::new();
        let np = self.wthor_players;
        if np > 0 {
            for (side, id) in [("black", raw.black), ("white", raw.white)] {
                if id as usize >= np {
                    out.push(AnomalyKind::UnknownPlayer { side, id, count: np });
                }
            }
        }
        let nt = self.wthor_tournaments;
        if nt > 0 && raw.tournament as usize >= nt {
            out.push(AnomalyKind::UnknownTournament { id: raw.tournament, count: nt });
        }
        out
    }

    fn add_file(
        &mut self,
        file: ThorFile,
        compression: Compression,
        mut anomalies: Vec<Anomaly>,
        strict: bool,
    ) -> Result<(), ThorError> {
        let file_index = u32::try_from(self.files.len()).expect("fewer than 2^32 files");
        let mut summary = FileSummary {
            name: file.name.clone(),
            format: SourceFormat::Wthor,
            compression,
            kind: file.kind,
            header: file.header,
            records: file.len(),
            games: 0,
            finished: 0,
            finished_early: 0,
            unfinished: 0,
            anomalies: 0,
            skipped: BTreeMap::new(),
        };
        let (np, nt) = (self.wthor_players, self.wthor_tournaments);
        if let Records::Games(raws) = &file.records {
            let checked: Vec<_> = raws
                .par_iter()
                .enumerate()
                .map(|(i, raw)| {
                    let (replay, faults) = validate(raw);
                    let mut found: Vec<Anomaly> = faults
                        .into_iter()
                        .map(|f| Anomaly::game(&file.name, i, (f.ply > 0).then_some(f.ply), f.kind))
                        .collect();
                    found.extend(self.id_anomalies(raw).into_iter().map(|k| Anomaly::game(&file.name, i, None, k)));
                    (i, raw, replay, found)
                })
                .collect();
            for (i, raw, replay, found) in checked {
                if !found.is_empty() {
                    if strict {
                        return Err(found[0].clone().into());
                    }
                    anomalies.extend(found);
                    continue;
                }
                let replay = replay.expect("no fault means a replay");
                summary.count(replay.outcome);
                summary.games += 1;
                self.games.push(ThorGame {
                    file: file_index,
                    // N1 is a u32, so a file never holds more records.
                    record: u32::try_from(i).expect("at most 2^32 - 1 records"),
                    year: file.header.game_year,
                    depth: file.header.depth,
                    black: (usize::from(raw.black) < np).then_some(u32::from(raw.black)),
                    white: (usize::from(raw.white) < np).then_some(u32::from(raw.white)),
                    tournament: (usize::from(raw.tournament) < nt).then_some(u32::from(raw.tournament)),
                    result_known: true,
                    raw: *raw,
                    replay,
                });
            }
        }
        summary.anomalies = anomalies.len();
        self.anomalies.extend(anomalies);
        self.files.push(summary);
        Ok(())
    }

    /// Builds the position index (done by `load` when asked, else by the first query
    /// that needs it).
    pub(crate) fn build_index(&mut self) {
        let index = self.compute_index();
        self.index = index.into();
    }

    /// The position index, built now if it was not.
    fn index(&self) -> &[IndexEntry] {
        self.index.get_or_init(|| self.compute_index())
    }

    fn compute_index(&self) -> Vec<IndexEntry> {
        // Each game's entry count is known from its replay, so the entries are written
        // in place into one exact-size array, game by game in parallel.
        let counts: Vec<usize> =
            self.games.iter().map(|g| g.replay.move_count as usize + g.replay.passes as usize + 1).collect();
        let empty = IndexEntry { key: 0, game: 0, ply: 0, transform: 0, next: 0 };
        let mut index = vec![empty; counts.iter().sum()];
        let mut slices = Vec::with_capacity(self.games.len());
        let mut rest: &mut [IndexEntry] = &mut index;
        for &n in &counts {
            let (head, tail) = rest.split_at_mut(n);
            slices.push(head);
            rest = tail;
        }
        slices.into_par_iter().zip(self.games.par_iter()).enumerate().for_each(|(g, (slots, game))| {
            let mut ply = 0usize;
            let _ = replay_with(&game.raw, |pos, mv| {
                let (key, t) = position_key(pos);
                let next = match mv {
                    Some(Move::Place(sq)) => sq.byte(),
                    Some(Move::Pass) => NEXT_PASS,
                    None => NEXT_END,
                };
                let game = u32::try_from(g).expect("fewer than 2^32 games fit in memory");
                let at = u8::try_from(ply).expect("60 moves and at most as many passes");
                slots[ply] = IndexEntry { key, game, ply: at, transform: t.code(), next };
                ply += 1;
            });
        });
        index.par_sort_unstable_by_key(|e| e.key);
        index
    }

    /// Per-file summaries, in load order.
    pub fn files(&self) -> &[FileSummary] {
        &self.files
    }

    /// Every valid 8×8 game, file by file in record order ([`GameId::index`] is the
    /// place of a game).
    pub fn games(&self) -> &[ThorGame] {
        &self.games
    }

    /// The ids of every game, in load order.
    pub fn game_ids(&self) -> impl ExactSizeIterator<Item = GameId> + use<'_> {
        (0..self.games.len()).map(|i| self.id_at(i))
    }

    /// The id of the game at `index` of [`ThorDatabase::games`].
    pub(crate) fn id_at(&self, index: usize) -> GameId {
        let index = u32::try_from(index).expect("a database holds fewer than 2^32 games");
        GameId { index, stamp: self.stamp }
    }

    /// The game `id` names; `None` for an id of another database, or of this one before
    /// [`ThorDatabase::retain`] changed its games.
    pub fn game(&self, id: GameId) -> Option<&ThorGame> {
        (id.stamp == self.stamp).then(|| self.games.get(id.index())).flatten()
    }

    /// The game `id` names, `id` made by this database: the crate's own lookups.
    pub(crate) fn own_game(&self, id: GameId) -> &ThorGame {
        debug_assert_eq!(id.stamp, self.stamp, "an id of another database");
        &self.games[id.index()]
    }

    /// Player names by id: those of the `.JOU` file (by its ids), then those of text
    /// sources.
    pub fn players(&self) -> &[String] {
        &self.players
    }

    /// Tournament names by id: those of the `.TRN` file, then the places of GGF games.
    pub fn tournaments(&self) -> &[String] {
        &self.tournaments
    }

    /// Everything wrong that was found (and skipped).
    pub fn anomalies(&self) -> &[Anomaly] {
        &self.anomalies
    }

    /// Keeps only the games `keep` accepts (in their order) and rebuilds the position
    /// index, if there was one, over them: ids given before no longer hold.
    pub fn retain(&mut self, keep: impl FnMut(&ThorGame) -> bool) {
        self.games.retain(keep);
        self.stamp = Stamp::default();
        if self.index.get().is_some() {
            self.build_index();
        }
    }

    #[cfg(feature = "explorer")]
    /// Positions in the index (building it if it was not).
    pub(crate) fn index_len(&self) -> usize {
        self.index().len()
    }

    /// Index entries of the games reaching `pos`.
    fn entries_reaching(&self, pos: &Position) -> &[IndexEntry] {
        let (key, _) = position_key(pos);
        let index = self.index();
        let lo = index.partition_point(|e| e.key < key);
        let hi = index.partition_point(|e| e.key <= key);
        &index[lo..hi]
    }

    /// Games that reach `pos` under any symmetry, each with the move it played next
    /// mapped into `pos`'s orientation.
    pub(crate) fn games_reaching(&self, pos: &Position) -> Vec<Reach> {
        let (_, query_t) = position_key(pos);
        let back = query_t.inverse();
        self.entries_reaching(pos)
            .iter()
            .map(|e| {
                let to_canonical = Transform::from_code(e.transform).expect("stored codes are below 8");
                let mv = match e.next {
                    NEXT_END => None,
                    NEXT_PASS => Some(Move::Pass),
                    sq => Some(Move::Place(back.square(to_canonical.square(Square::new(sq))))),
                };
                Reach { game: GameId { index: e.game, stamp: self.stamp }, ply: e.ply, next: mv }
            })
            .collect()
    }

    /// A name from `table`: `#id` for a WTHOR id without its name file, `?` when the
    /// source does not say.
    fn name_in(&self, table: &[String], id: Option<u32>, raw_id: u16, g: &ThorGame) -> String {
        match id.and_then(|i| table.get(i as usize)) {
            Some(name) => name.clone(),
            None if self.files[g.file as usize].format == SourceFormat::Wthor => format!("#{raw_id}"),
            None => "?".into(),
        }
    }

    /// Black's name in game `g`.
    pub fn black_name(&self, g: &ThorGame) -> String {
        self.name_in(&self.players, g.black, g.raw.black, g)
    }

    /// White's name in game `g`.
    pub fn white_name(&self, g: &ThorGame) -> String {
        self.name_in(&self.players, g.white, g.raw.white, g)
    }

    /// The tournament (or GGF place) of game `g`.
    pub fn tournament_name(&self, g: &ThorGame) -> String {
        self.name_in(&self.tournaments, g.tournament, g.raw.tournament, g)
    }

    /// Whether game `g` passes the filter's name and year conditions (not the position).
    fn matches_fields(&self, g: &ThorGame, f: &GameFilter) -> bool {
        if let Some((lo, hi)) = f.years {
            if g.known_year().is_none_or(|y| y < lo || y > hi) {
                return false;
            }
        }
        if let Some(t) = &f.tournament {
            if !self.tournament_name(g).to_lowercase().contains(&t.to_lowercase()) {
                return false;
            }
        }
        if let Some(p) = &f.player {
            let p = p.to_lowercase();
            let is = |name: String| name.to_lowercase().contains(&p);
            let ok = match f.player_color {
                Some(Color::Black) => is(self.black_name(g)),
                Some(Color::White) => is(self.white_name(g)),
                None => is(self.black_name(g)) || is(self.white_name(g)),
            };
            if !ok {
                return false;
            }
        }
        true
    }

    /// The games passing `filter`, in load order.
    pub fn select(&self, filter: &GameFilter) -> Vec<GameId> {
        match &filter.position {
            Some(pos) => {
                let mut ids: Vec<GameId> = self.games_reaching(pos).into_iter().map(|r| r.game).collect();
                ids.sort_unstable();
                ids.dedup();
                ids.retain(|&g| self.matches_fields(self.own_game(g), filter));
                ids
            }
            None => self.game_ids().filter(|&g| self.matches_fields(self.own_game(g), filter)).collect(),
        }
    }

    /// Sorts game indices by `key` (stable: ties keep load order); ids of another
    /// database go last.
    pub fn sort_games(&self, ids: &mut [GameId], key: SortKey) {
        let cmp = |a: &GameId, b: &GameId| -> Ordering {
            let (ga, gb) = match (self.game(*a), self.game(*b)) {
                (Some(ga), Some(gb)) => (ga, gb),
                (ga, gb) => return ga.is_none().cmp(&gb.is_none()),
            };
            match key {
                SortKey::Year => ga.year.cmp(&gb.year),
                SortKey::Black => self.black_name(ga).cmp(&self.black_name(gb)),
                SortKey::White => self.white_name(ga).cmp(&self.white_name(gb)),
                SortKey::Tournament => self.tournament_name(ga).cmp(&self.tournament_name(gb)),
                SortKey::Score => gb.black_discs().cmp(&ga.black_discs()),
            }
        };
        ids.sort_by(cmp);
    }
}

/// Orders for game listings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortKey {
    /// Oldest first.
    Year,
    /// By black player's name.
    Black,
    /// By white player's name.
    White,
    /// By tournament name.
    Tournament,
    /// Highest black score first.
    Score,
}

/// A sort key that is not one of [`SortKey`]'s names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SortKeyError {
    /// None of the names (the caller knows the text it gave).
    #[error("not a sort key (year, black, white, tournament, score)")]
    Unknown,
}

impl std::str::FromStr for SortKey {
    type Err = SortKeyError;

    fn from_str(s: &str) -> Result<SortKey, SortKeyError> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "year" => SortKey::Year,
            "black" => SortKey::Black,
            "white" => SortKey::White,
            "tournament" => SortKey::Tournament,
            "score" => SortKey::Score,
            _ => return Err(SortKeyError::Unknown),
        })
    }
}

#[cfg(test)]
mod size_tests {
    /// A game in memory: a million-game archive is held in about 136 MB.
    #[test]
    fn a_game_takes_at_most_136_bytes() {
        assert!(std::mem::size_of::<super::ThorGame>() <= 136, "{}", std::mem::size_of::<super::ThorGame>());
    }
}
