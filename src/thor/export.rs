//! Writing games from any source in any format: WTHOR files with their `.JOU` and
//! `.TRN` ([`ThorDatabase::to_wthor`], with a count of what WTHOR cannot hold), GGF,
//! transcripts and JSON lines ([`ThorDatabase::write_game`]). Each text format is read
//! back by [`super::text`] to the same moves and the scores it can hold.
// Input handling: every narrowing or sign-changing conversion is checked.
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_possible_wrap)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::database::{GameId, ThorDatabase, ThorGame};
use super::format::{FileKind, Header, Records, ThorFile, PLAYER_RECORD_LEN, TOURNAMENT_RECORD_LEN};
use super::ggf::escape;
use super::replay::Outcome;
use super::source::SourceFormat;
use crate::board::Color;
use crate::fileio::{atomic_write, IoError};
use crate::position::Position;
use crate::square::{format_moves, Move};

/// The text formats games are written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GameText {
    /// One GGF game per line, as GGS's archives.
    Ggf,
    /// Moves, then black's disc difference when the result is known.
    Transcript,
    /// One JSON object per line: year, file, record, tournament, black, white,
    /// black_score, theoretical_score, theoretical_depth, outcome and moves (`null`
    /// where unknown).
    Jsonl,
    /// Comma-separated values under a header line (see [`ThorDatabase::write_games`]):
    /// year, tournament, black, white, black_score, theoretical_score,
    /// theoretical_depth, outcome, moves (empty where unknown).
    Csv,
}

/// The header line of [`GameText::Csv`].
const CSV_HEADER: &str = "year,tournament,black,white,black_score,theoretical_score,theoretical_depth,outcome,moves";

/// A CSV field: quoted when it holds a comma, a quote or a line end.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A game as JSON: what `thor export --format jsonl` writes and the JSON-lines reader
/// reads back. Unknown facts are `null`.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct GameJson {
    /// Year of the game.
    pub year: Option<u16>,
    /// The file it was read from.
    pub file: String,
    /// WTHOR record index or text line.
    pub record: u32,
    /// Tournament or place.
    pub tournament: String,
    /// Black's name.
    pub black: String,
    /// White's name.
    pub white: String,
    /// Black's final discs.
    pub black_score: Option<u8>,
    /// Black's discs under perfect play from `theoretical_depth` empties.
    pub theoretical_score: Option<u8>,
    /// Empties of the theoretical score.
    pub theoretical_depth: Option<u8>,
    /// How the move list ends.
    pub outcome: Outcome,
    /// The moves (`f5d6c3…`): without passes in exported lines, as the readers take
    /// them; with passes (`ps`) where a page replays them.
    pub moves: String,
}

/// What a WTHOR export could not keep.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Dropped {
    /// Names cut to WTHOR's 19 (players) or 25 (tournaments) Latin-1 characters, or
    /// with characters outside Latin-1 written `?`.
    pub names_altered: usize,
    /// Games without a known result: written with the final position's disc count.
    pub results_unknown: usize,
    /// Games without a theoretical score: written in files with P3 = 0 (the result
    /// stands in for it).
    pub theoretical_unknown: usize,
    /// Games without a year: written in a file for year 0.
    pub years_unknown: usize,
    /// Names beyond the 65,535 a name file holds: written as `?`.
    pub names_lost: usize,
    /// Games from text sources: their dates beyond the year, clocks, ratings and
    /// per-move annotations have no place in WTHOR.
    pub text_games: usize,
}

/// Games as WTHOR files.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct WthorExport {
    /// One game file per (year, P3), in that order; a single empty one when there
    /// are no games.
    pub games: Vec<WthorFile>,
    /// The player names the games' ids refer to (`None` when there are none).
    pub players: Option<WthorFile>,
    /// The tournament names.
    pub tournaments: Option<WthorFile>,
    /// What could not be kept.
    pub dropped: Dropped,
}

/// One WTHOR file of an export, ready to be written.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WthorFile {
    /// The file's bytes: header and records.
    pub bytes: Vec<u8>,
    /// Its records: games, or names.
    pub records: usize,
    /// The games' year (0 for a name file).
    pub year: u16,
    /// The games' P3, the empties of their theoretical scores (0 for a name file).
    pub depth: u8,
}

impl WthorExport {
    /// Writes the files, each atomically: the games to `path` when they make one file
    /// (one year and P3), else to `STEM_YEAR.EXT` (`STEM_YEAR_pP3.EXT` when a year has
    /// several P3) beside it; the names to `STEM.JOU` and `STEM.TRN`. Returns each
    /// path with its file, the game files first.
    pub fn write_at(&self, path: &Path) -> Result<Vec<(PathBuf, &WthorFile)>, IoError> {
        let stem = path.file_stem().map_or("games".into(), |s| s.to_string_lossy().into_owned());
        let ext = path.extension().map_or("wtb".into(), |s| s.to_string_lossy().into_owned());
        let years: BTreeSet<u16> = self.games.iter().map(|f| f.year).collect();
        let mut files: Vec<(PathBuf, &WthorFile)> = match &self.games[..] {
            [one] => vec![(path.to_path_buf(), one)],
            many => many
                .iter()
                .map(|f| {
                    let name = if years.len() == many.len() {
                        format!("{stem}_{}.{ext}", f.year)
                    } else {
                        format!("{stem}_{}_p{}.{ext}", f.year, f.depth)
                    };
                    (path.with_file_name(name), f)
                })
                .collect(),
        };
        for (file, names) in [(&self.players, "JOU"), (&self.tournaments, "TRN")] {
            if let Some(f) = file {
                files.push((path.with_file_name(format!("{stem}.{names}")), f));
            }
        }
        for (out, f) in &files {
            atomic_write(out, &f.bytes).map_err(IoError::at(out))?;
        }
        Ok(files)
    }
}

impl WthorFile {
    fn of(file: &ThorFile) -> WthorFile {
        let games = matches!(file.kind, FileKind::Games | FileKind::Games10);
        WthorFile {
            bytes: file.to_bytes(),
            records: file.len(),
            year: if games { file.header.game_year } else { 0 },
            depth: if games { file.header.depth } else { 0 },
        }
    }
}

/// A name as a WTHOR name record: Latin-1, at most `len - 1` bytes and a NUL.
fn name_record(name: &str, len: usize, altered: &mut usize) -> Vec<u8> {
    let mut out: Vec<u8> = name.chars().map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?')).collect();
    let replaced = name.chars().any(|c| u32::from(c) > 0xff);
    if out.len() >= len {
        out.truncate(len - 1);
        *altered += 1;
    } else if replaced {
        *altered += 1;
    }
    out
}

/// Builds a table of names for the ids in use, in first-use order.
struct Table<'a> {
    source: &'a [String],
    ids: HashMap<Option<u32>, u16>,
    names: Vec<String>,
}

impl<'a> Table<'a> {
    fn new(source: &'a [String]) -> Self {
        Table { source, ids: HashMap::new(), names: Vec::new() }
    }

    /// The new id of name `id` (`None`: unknown, written `?`). A name file holds at
    /// most 65,535 names; the last place is kept for `?`, which the names beyond take.
    fn id(&mut self, id: Option<u32>, lost: &mut usize) -> u16 {
        if let Some(&new) = self.ids.get(&id) {
            return new;
        }
        let full = self.names.len() >= usize::from(u16::MAX) - 1;
        if full && id.is_some() {
            *lost += 1;
            return self.id(None, lost);
        }
        let new = u16::try_from(self.names.len()).expect("at most 65,535 names");
        let name = id.and_then(|i| self.source.get(i as usize)).map_or("?", String::as_str);
        self.names.push(name.to_string());
        self.ids.insert(id, new);
        new
    }

    fn file(self, kind: FileKind, len: usize, altered: &mut usize) -> Option<ThorFile> {
        names_file(&self.names, kind, len, altered)
    }
}

/// A `.JOU` or `.TRN` file of `names` (records `len` bytes long), `None` for no names.
fn names_file(names: &[String], kind: FileKind, len: usize, altered: &mut usize) -> Option<ThorFile> {
    if names.is_empty() {
        return None;
    }
    let records = names.iter().map(|n| name_record(n, len, altered)).collect();
    Some(ThorFile { name: String::new(), kind, header: Header::new(0, 0), records: Records::Names(records) })
}

impl ThorDatabase {
    /// The games `ids` as WTHOR files: one game file per (year, P3), since a file's
    /// header holds a single year and P3; games in the order given within a file.
    ///
    /// When every game comes from WTHOR files, records are kept byte for byte (ids
    /// too) and the name files are those loaded. Otherwise names are renumbered into
    /// new `.JOU` and `.TRN` tables holding the names the games use; what WTHOR
    /// cannot hold is counted in [`WthorExport::dropped`].
    ///
    /// Ids of another database are left out.
    pub fn to_wthor(&self, ids: &[GameId]) -> WthorExport {
        let all_wthor =
            ids.iter().filter_map(|&i| self.game(i)).all(|g| self.files[g.file as usize].format == SourceFormat::Wthor);
        let mut dropped = Dropped::default();
        let mut players = Table::new(&self.players);
        let mut tournaments = Table::new(&self.tournaments);
        let mut groups: BTreeMap<(u16, u8), Vec<super::format::RawGame>> = BTreeMap::new();
        for g in ids.iter().filter_map(|&i| self.game(i)) {
            let mut raw = g.raw;
            if !all_wthor {
                raw.black = players.id(g.black, &mut dropped.names_lost);
                raw.white = players.id(g.white, &mut dropped.names_lost);
                raw.tournament = tournaments.id(g.tournament, &mut dropped.names_lost);
            }
            let from_text = self.files[g.file as usize].format != SourceFormat::Wthor;
            dropped.text_games += usize::from(from_text);
            if g.black_discs().is_none() {
                raw.black_score = g.replay.black_final_discs();
                dropped.results_unknown += 1;
            }
            if g.theoretical_discs().is_none() {
                // A WTHOR record is kept as it is; a text game's result stands in.
                if from_text {
                    raw.theoretical_score = raw.black_score;
                }
                dropped.theoretical_unknown += 1;
            }
            dropped.years_unknown += usize::from(g.known_year().is_none());
            groups.entry((g.year, g.depth)).or_default().push(raw);
        }
        if groups.is_empty() {
            // An empty selection is still a file: the header of no games.
            groups.insert((0, 24), Vec::new());
        }
        let games = groups
            .into_iter()
            .map(|((year, depth), games)| {
                let mut header = Header::new(year, depth);
                header.n1 = u32::try_from(games.len()).unwrap_or(u32::MAX);
                let file =
                    ThorFile { name: format!("{year}"), kind: FileKind::Games, header, records: Records::Games(games) };
                WthorFile::of(&file)
            })
            .collect();
        let (players, tournaments) = if all_wthor {
            // The loaded name files, as they were: nothing of them is altered.
            let mut unchanged = 0;
            (
                names_file(&self.players[..self.wthor_players], FileKind::Players, PLAYER_RECORD_LEN, &mut unchanged),
                names_file(
                    &self.tournaments[..self.wthor_tournaments],
                    FileKind::Tournaments,
                    TOURNAMENT_RECORD_LEN,
                    &mut unchanged,
                ),
            )
        } else {
            let mut altered = 0;
            let files = (
                players.file(FileKind::Players, PLAYER_RECORD_LEN, &mut altered),
                tournaments.file(FileKind::Tournaments, TOURNAMENT_RECORD_LEN, &mut altered),
            );
            dropped.names_altered = altered;
            files
        };
        let of = |f: Option<ThorFile>| f.as_ref().map(WthorFile::of);
        WthorExport { games, players: of(players), tournaments: of(tournaments), dropped }
    }

    /// The name of the file game `g` was read from (what JSON exports call `file`).
    pub(crate) fn file_name(&self, g: &ThorGame) -> &str {
        &self.files[g.file as usize].name
    }

    /// Game `g` as JSON.
    pub(crate) fn game_json(&self, g: &ThorGame, with_passes: bool) -> GameJson {
        GameJson {
            year: g.known_year(),
            file: self.file_name(g).to_string(),
            record: g.record,
            tournament: self.tournament_name(g),
            black: self.black_name(g),
            white: self.white_name(g),
            black_score: g.black_discs(),
            theoretical_score: g.theoretical_discs(),
            theoretical_depth: (g.depth > 0).then_some(g.depth),
            outcome: g.replay.outcome,
            moves: if with_passes { format_moves(&g.moves_with_passes()) } else { g.transcript() },
        }
    }

    /// Games `ids` in `format`, a line each (after the header line of CSV); ids of
    /// another database are left out.
    pub fn write_games(&self, ids: &[GameId], format: GameText) -> String {
        let mut out = String::new();
        if format == GameText::Csv {
            out.push_str(CSV_HEADER);
            out.push('\n');
        }
        for g in ids.iter().filter_map(|&i| self.game(i)) {
            out.push_str(&self.write_game(g, format));
            out.push('\n');
        }
        out
    }

    /// Writes games `ids` in `format` to `path`, atomically and durably.
    pub fn write_games_to(&self, ids: &[GameId], format: GameText, path: &Path) -> Result<(), IoError> {
        atomic_write(path, self.write_games(ids, format).as_bytes()).map_err(IoError::at(path))
    }

    /// Game `g` as one line of `format` (without the line end; CSV without its header).
    pub fn write_game(&self, g: &ThorGame, format: GameText) -> String {
        match format {
            GameText::Transcript => match g.black_discs() {
                Some(b) => format!("{} {:+}", g.transcript(), 2 * i32::from(b) - 64),
                None => g.transcript(),
            },
            GameText::Jsonl => serde_json::to_string(&self.game_json(g, false)).unwrap_or_default(),
            GameText::Ggf => self.ggf(g),
            GameText::Csv => {
                let j = self.game_json(g, false);
                let known = |v: Option<u8>| v.map_or(String::new(), |v| v.to_string());
                let outcome = serde_json::to_value(j.outcome).ok().and_then(|v| v.as_str().map(str::to_string));
                format!(
                    "{},{},{},{},{},{},{},{},{}",
                    j.year.map_or(String::new(), |y| y.to_string()),
                    csv_field(&j.tournament),
                    csv_field(&j.black),
                    csv_field(&j.white),
                    known(j.black_score),
                    known(j.theoretical_score),
                    known(j.theoretical_depth),
                    outcome.unwrap_or_default(),
                    j.moves
                )
            }
        }
    }

    fn ggf(&self, g: &ThorGame) -> String {
        let mut out = String::with_capacity(512);
        out.push_str("(;GM[Othello]");
        let mut tag = |name: &str, value: &str| {
            let _ = write!(out, "{name}[{}]", escape(value));
        };
        if g.tournament.is_some() {
            tag("PC", &self.tournament_name(g));
        }
        if let Some(y) = g.known_year() {
            tag("DT", &y.to_string());
        }
        if g.black.is_some() {
            tag("PB", &self.black_name(g));
        }
        if g.white.is_some() {
            tag("PW", &self.white_name(g));
        }
        match g.black_discs() {
            Some(b) => tag("RE", &format!("{:+}", 2 * i32::from(b) - 64)),
            None => tag("RE", "?"),
        }
        ggf_moves(&mut out, &g.moves_with_passes());
        out
    }
}

/// Ends a GGF game begun in `out` (its tags written): the standard start, the moves
/// from it (passes as `PA`), `;)`.
pub(crate) fn ggf_moves(out: &mut String, moves: &[Move]) {
    let _ = write!(out, "TY[8]BO[8 {} *]", Position::START.squares_text('*', 'O', '-'));
    let mut side = Color::Black;
    for &mv in moves {
        let colour = if side == Color::Black { 'B' } else { 'W' };
        match mv {
            Move::Pass => {
                let _ = write!(out, "{colour}[PA]");
            }
            Move::Place(sq) => {
                let _ = write!(out, "{colour}[{}]", sq.to_string().to_ascii_uppercase());
            }
        }
        side = !side;
    }
    out.push_str(";)");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thor::{LoadOptions, Source};

    /// More players than a `.JOU` holds: the first 65,534 keep their names, the rest
    /// become `?` (counted), and the export reloads without an anomaly.
    #[test]
    fn names_beyond_a_name_file_become_unknown_and_are_counted() {
        let n = 33_000;
        let text: String =
            (0..n).map(|i| format!("{{\"black\":\"b{i}\",\"white\":\"w{i}\",\"moves\":\"f5\"}}\n")).collect();
        let db = ThorDatabase::load(&[Source::from_vec("x.jsonl", text.into_bytes())], LoadOptions::default()).unwrap();
        assert_eq!(db.players.len(), 2 * n);
        let ids: Vec<GameId> = (0..n).map(|i| db.id_at(i)).collect();
        let export = db.to_wthor(&ids);
        assert_eq!(export.dropped.names_lost, 2 * n - 65_534);
        let players = export.players.clone().unwrap();
        assert_eq!(players.records, 65_535);
        let mut sources: Vec<Source> =
            export.games.iter().map(|f| Source::from_vec("g.wtb", f.bytes.clone())).collect();
        sources.push(Source::from_vec("g.JOU", players.bytes));
        sources.extend(export.tournaments.iter().map(|f| Source::from_vec("g.TRN", f.bytes.clone())));
        let back = ThorDatabase::load(&sources, LoadOptions::default().with_strict(true)).unwrap();
        assert_eq!(back.games.len(), n);
        assert_eq!(back.black_name(&back.games[0]), "b0");
        assert_eq!(back.white_name(&back.games[n - 1]), "?");
    }
}
