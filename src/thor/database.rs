//! [`ThorDatabase`]: WTHOR files loaded together, games replayed and validated, names
//! joined, and every position indexed by its canonical key so that "which games reach
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

use super::format::{decode_name, FileKind, Header, RawGame, Records, ThorFile};
use super::replay::{replay_with, validate, Outcome, Replay};
use super::source::Source;
use super::{Anomaly, AnomalyKind, ThorError};
use crate::board::Color;
use crate::position::Position;
use crate::results::win_rate;
use crate::square::{Move, Square};
use crate::symmetry::Transform;
use crate::zobrist::WHITE_TO_MOVE;

/// How to treat damaged input.
#[derive(Clone, Copy, Debug, Default)]
#[non_exhaustive]
pub struct LoadOptions {
    /// Fail on the first anomaly instead of skipping the file or game.
    pub strict: bool,
    /// Build the position index (needed by position filters and statistics).
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

/// A replayed, valid game with where it came from.
#[derive(Clone, Copy, Debug)]
pub struct ThorGame {
    /// Index of its file in [`ThorDatabase::files`].
    pub file: u32,
    /// 0-based record index in that file.
    pub record: u32,
    /// Year of the games in the file.
    pub year: u16,
    /// P3 of its file.
    pub depth: u8,
    /// The record as stored.
    pub raw: RawGame,
    /// The replay.
    pub replay: Replay,
}

impl ThorGame {
    /// The moves including inferred passes, from the start.
    pub fn moves_with_passes(&self) -> Vec<Move> {
        let mut out = Vec::with_capacity(64);
        // Already validated at load, so replay cannot fail here.
        let _ = replay_with(&self.raw, |_, mv| out.extend(mv));
        out
    }

    /// The stored moves (no passes) as `f5d6c3…`.
    pub fn transcript(&self) -> String {
        let moves: Vec<Move> = self.moves_with_passes().into_iter().filter(|m| *m != Move::Pass).collect();
        crate::square::format_moves(&moves)
    }
}

/// What one file contributed.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct FileSummary {
    /// Name as given.
    pub name: String,
    /// Kind of file.
    pub kind: FileKind,
    /// Its header.
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

/// A game reaching a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reach {
    /// Index into [`ThorDatabase::games`].
    pub game: usize,
    /// Plies (moves and passes) the game had played when it got there.
    pub ply: u8,
    /// The move it played next, in the query's orientation; `None` where its move list ends.
    pub next: Option<Move>,
}

/// Loaded, validated, indexed WTHOR data.
#[derive(Default)]
pub struct ThorDatabase {
    /// Per-file summaries, in load order.
    pub files: Vec<FileSummary>,
    /// Every valid 8×8 game, file by file in record order.
    pub games: Vec<ThorGame>,
    /// Player names by id (empty without a `.JOU` file).
    pub players: Vec<String>,
    /// Tournament names by id (empty without a `.TRN` file).
    pub tournaments: Vec<String>,
    /// Everything wrong that was found (and skipped).
    pub anomalies: Vec<Anomaly>,
    index: Vec<IndexEntry>,
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

/// Statistics of the games that reach a position.
#[derive(Clone, Debug, Serialize, Default)]
pub struct PositionStats {
    /// Games reaching the position.
    pub games: usize,
    /// Won by black (stored real score above 32).
    pub black_wins: usize,
    /// Drawn.
    pub draws: usize,
    /// Won by white.
    pub white_wins: usize,
    /// Mean of black's stored score.
    pub average_black_score: f64,
    /// Median of black's stored score.
    pub median_black_score: f64,
    /// Games whose move list ends in this position.
    pub ended_here: usize,
    /// Moves played from the position, most played first, in the query's orientation.
    pub moves: Vec<MoveStats>,
}

/// How one move from a position fared.
#[derive(Clone, Debug, Serialize)]
pub struct MoveStats {
    /// The move, in the query's orientation (`pass` for a forced pass).
    #[serde(rename = "move")]
    pub mv: String,
    /// Games that played it.
    pub games: usize,
    /// Share of the games that continued from the position.
    pub share: f64,
    /// Black wins among them.
    pub black_wins: usize,
    /// Draws among them.
    pub draws: usize,
    /// (wins + draws / 2) / games, for black.
    pub black_win_rate: f64,
    /// Mean black score.
    pub average_black_score: f64,
}

impl ThorDatabase {
    /// Loads sources (files' bytes), validating and replaying every game in parallel.
    pub fn load(sources: &[Source], opts: LoadOptions) -> Result<ThorDatabase, ThorError> {
        let parsed: Vec<_> = sources.par_iter().map(|s| ThorFile::parse(&s.name, s.bytes())).collect();
        let mut db = ThorDatabase::default();
        let mut files = Vec::new();
        for result in parsed {
            match result {
                Ok((file, anomalies)) => {
                    if let (true, Some(a)) = (opts.strict, anomalies.first()) {
                        return Err(a.clone().into());
                    }
                    files.push((file, anomalies));
                }
                Err(a) if opts.strict => return Err(a.into()),
                Err(a) => db.anomalies.push(a),
            }
        }
        for (file, _) in &files {
            let target = match file.kind {
                FileKind::Players => &mut db.players,
                FileKind::Tournaments => &mut db.tournaments,
                _ => continue,
            };
            if let (true, Records::Names(names)) = (target.is_empty(), &file.records) {
                *target = names.iter().map(|n| decode_name(n)).collect();
            }
        }
        for (file, anomalies) in files {
            db.add_file(file, anomalies, opts.strict)?;
        }
        if opts.index {
            db.build_index();
        }
        Ok(db)
    }

    /// Checks a game's ids against the name files, when they were loaded.
    fn id_anomalies(&self, raw: &RawGame) -> Vec<AnomalyKind> {
        let mut out = Vec::new();
        let np = self.players.len();
        if np > 0 {
            for (side, id) in [("black", raw.black), ("white", raw.white)] {
                if id as usize >= np {
                    out.push(AnomalyKind::UnknownPlayer { side, id, count: np });
                }
            }
        }
        let nt = self.tournaments.len();
        if nt > 0 && raw.tournament as usize >= nt {
            out.push(AnomalyKind::UnknownTournament { id: raw.tournament, count: nt });
        }
        out
    }

    fn add_file(&mut self, file: ThorFile, mut anomalies: Vec<Anomaly>, strict: bool) -> Result<(), ThorError> {
        let file_index = u32::try_from(self.files.len()).expect("fewer than 2^32 files");
        let mut summary = FileSummary {
            name: file.name.clone(),
            kind: file.kind,
            header: file.header,
            records: file.len(),
            games: 0,
            finished: 0,
            finished_early: 0,
            unfinished: 0,
            anomalies: 0,
        };
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
                match replay.outcome {
                    Outcome::Finished => summary.finished += 1,
                    Outcome::FinishedEarly => summary.finished_early += 1,
                    Outcome::Unfinished => summary.unfinished += 1,
                }
                summary.games += 1;
                self.games.push(ThorGame {
                    file: file_index,
                    // N1 is a u32, so a file never holds more records.
                    record: u32::try_from(i).expect("at most 2^32 - 1 records"),
                    year: file.header.game_year,
                    depth: file.header.depth,
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

    /// Builds the position index (done by `load` when asked).
    pub(crate) fn build_index(&mut self) {
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
        self.index = index;
    }

    /// Positions in the index.
    pub fn index_len(&self) -> usize {
        self.index.len()
    }

    /// Index entries of the games reaching `pos`.
    fn entries_reaching(&self, pos: &Position) -> &[IndexEntry] {
        let (key, _) = position_key(pos);
        let lo = self.index.partition_point(|e| e.key < key);
        let hi = self.index.partition_point(|e| e.key <= key);
        &self.index[lo..hi]
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
                Reach { game: e.game as usize, ply: e.ply, next: mv }
            })
            .collect()
    }

    /// The player's name for an id (`#id` when unknown).
    pub fn player_name(&self, id: u16) -> String {
        self.players.get(id as usize).cloned().unwrap_or_else(|| format!("#{id}"))
    }

    /// The tournament's name for an id (`#id` when unknown).
    pub fn tournament_name(&self, id: u16) -> String {
        self.tournaments.get(id as usize).cloned().unwrap_or_else(|| format!("#{id}"))
    }

    /// Whether game `g` passes the filter's name and year conditions (not the position).
    fn matches_fields(&self, g: &ThorGame, f: &GameFilter) -> bool {
        if let Some((lo, hi)) = f.years {
            if g.year < lo || g.year > hi {
                return false;
            }
        }
        if let Some(t) = &f.tournament {
            if !self.tournament_name(g.raw.tournament).to_lowercase().contains(&t.to_lowercase()) {
                return false;
            }
        }
        if let Some(p) = &f.player {
            let p = p.to_lowercase();
            let is = |id| self.player_name(id).to_lowercase().contains(&p);
            let ok = match f.player_color {
                Some(Color::Black) => is(g.raw.black),
                Some(Color::White) => is(g.raw.white),
                None => is(g.raw.black) || is(g.raw.white),
            };
            if !ok {
                return false;
            }
        }
        true
    }

    /// Indices of the games passing `filter`, in load order.
    pub fn select(&self, filter: &GameFilter) -> Vec<usize> {
        match &filter.position {
            Some(pos) => {
                let mut ids: Vec<usize> = self.games_reaching(pos).into_iter().map(|r| r.game).collect();
                ids.sort_unstable();
                ids.dedup();
                ids.retain(|&g| self.matches_fields(&self.games[g], filter));
                ids
            }
            None => (0..self.games.len()).filter(|&g| self.matches_fields(&self.games[g], filter)).collect(),
        }
    }

    /// The games `ids` as WTHOR game files: one per (year, P3), since a file's header
    /// holds a single year and P3 and a reader dates every game by it. Each file takes
    /// the header of its first game's source file (creation date, P1, P2) with that year
    /// and P3, N1 the number of games and N2 = 0; files come in (year, P3) order, games
    /// in the order given.
    pub fn to_wtb_files(&self, ids: &[usize]) -> Vec<ThorFile> {
        let mut groups: std::collections::BTreeMap<(u16, u8), Vec<usize>> = Default::default();
        for &i in ids {
            let g = &self.games[i];
            groups.entry((g.year, g.depth)).or_default().push(i);
        }
        groups
            .into_iter()
            .map(|((year, depth), members)| {
                let mut header = self.files[self.games[members[0]].file as usize].header;
                header.game_year = year;
                header.depth = depth;
                header.n2 = 0;
                let games: Vec<_> = members.iter().map(|&i| self.games[i].raw).collect();
                header.n1 = u32::try_from(games.len()).expect("fewer than 2^32 games fit in memory");
                ThorFile { name: format!("{year}"), kind: FileKind::Games, header, records: Records::Games(games) }
            })
            .collect()
    }

    /// Statistics of the games that reach `pos` and pass `filter`'s other conditions.
    pub fn stats(&self, pos: &Position, filter: &GameFilter) -> PositionStats {
        let reaching: Vec<Reach> =
            self.games_reaching(pos).into_iter().filter(|r| self.matches_fields(&self.games[r.game], filter)).collect();
        let scores: Vec<u8> = reaching.iter().map(|r| self.games[r.game].raw.black_score).collect();
        let mut stats = summarize(&scores);
        stats.ended_here = reaching.iter().filter(|r| r.next.is_none()).count();
        let continuing = stats.games - stats.ended_here;
        let mut by_move: std::collections::BTreeMap<Move, Vec<u8>> = Default::default();
        for r in &reaching {
            if let Some(mv) = r.next {
                by_move.entry(mv).or_default().push(self.games[r.game].raw.black_score);
            }
        }
        stats.moves = by_move
            .into_iter()
            .map(|(mv, scores)| {
                let s = summarize(&scores);
                MoveStats {
                    mv: mv.to_string(),
                    games: s.games,
                    share: s.games as f64 / continuing.max(1) as f64,
                    black_wins: s.black_wins,
                    draws: s.draws,
                    black_win_rate: win_rate(s.black_wins as u64, s.draws as u64, s.games as u64)
                        .expect("a move was played in at least one game"),
                    average_black_score: s.average_black_score,
                }
            })
            .collect();
        stats.moves.sort_by(|a, b| b.games.cmp(&a.games).then_with(|| a.mv.cmp(&b.mv)));
        stats
    }

    /// Sorts game indices by `key` (stable: ties keep load order).
    pub(crate) fn sort_games(&self, ids: &mut [usize], key: SortKey) {
        let cmp = |a: &usize, b: &usize| -> Ordering {
            let (ga, gb) = (&self.games[*a], &self.games[*b]);
            match key {
                SortKey::Year => ga.year.cmp(&gb.year),
                SortKey::Black => self.player_name(ga.raw.black).cmp(&self.player_name(gb.raw.black)),
                SortKey::White => self.player_name(ga.raw.white).cmp(&self.player_name(gb.raw.white)),
                SortKey::Tournament => {
                    self.tournament_name(ga.raw.tournament).cmp(&self.tournament_name(gb.raw.tournament))
                }
                SortKey::Score => gb.raw.black_score.cmp(&ga.raw.black_score),
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

impl std::str::FromStr for SortKey {
    type Err = String;

    fn from_str(s: &str) -> Result<SortKey, String> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "year" => SortKey::Year,
            "black" => SortKey::Black,
            "white" => SortKey::White,
            "tournament" => SortKey::Tournament,
            "score" => SortKey::Score,
            _ => return Err(format!("`{s}` is not a sort key (year, black, white, tournament, score)")),
        })
    }
}

fn summarize(scores: &[u8]) -> PositionStats {
    let mut s = PositionStats { games: scores.len(), ..Default::default() };
    if scores.is_empty() {
        return s;
    }
    for &sc in scores {
        match sc.cmp(&32) {
            Ordering::Greater => s.black_wins += 1,
            Ordering::Equal => s.draws += 1,
            Ordering::Less => s.white_wins += 1,
        }
    }
    s.average_black_score = scores.iter().map(|&x| x as f64).sum::<f64>() / scores.len() as f64;
    let mut sorted = scores.to_vec();
    sorted.sort_unstable();
    let n = sorted.len();
    s.median_black_score =
        if n % 2 == 1 { sorted[n / 2] as f64 } else { (sorted[n / 2 - 1] as f64 + sorted[n / 2] as f64) / 2.0 };
    s
}
