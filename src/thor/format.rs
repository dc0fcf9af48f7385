//! The WTHOR byte formats: the 16-byte header, 68-byte 8×8 game records, 104-byte
//! 10×10 game records, 20-byte player and 26-byte tournament name records; parsing
//! from a byte slice (usually a memory map) and writing back byte for byte.
//!
//! Layout (little-endian):
//!
//! | offset | size | field |
//! | --- | --- | --- |
//! | 0 | 1 | century of the file's creation (e.g. 20) |
//! | 1 | 1 | year of creation within the century |
//! | 2 | 1 | month |
//! | 3 | 1 | day |
//! | 4 | 4 | N1: number of game records (`.wtb`) |
//! | 8 | 2 | N2: number of name records (`.JOU`, `.TRN`) |
//! | 10 | 2 | year of the games |
//! | 12 | 1 | P1: board size, 0 or 8 for 8×8, 10 for 10×10 |
//! | 13 | 1 | P2: 0 for games, 1 for solitaires |
//! | 14 | 1 | P3: depth of the theoretical score (empties when it was computed) |
//! | 15 | 1 | reserved |
//!
//! A game record: tournament id (u16), black id (u16), white id (u16), black's real
//! score (u8), black's theoretical score (u8), then the moves, one byte each as
//! `10 * row + column` (both 1-based: 11 = a1, 88 = h8), zero-padded. Passes are not
//! stored.

use byteorder::{ByteOrder, LittleEndian as LE};
use serde::Serialize;

use super::{Anomaly, AnomalyKind};

/// Bytes in the header of every WTHOR file.
pub(crate) const HEADER_LEN: usize = 16;
/// Bytes per 8×8 game record.
pub(crate) const GAME_RECORD_LEN: usize = 68;
/// Bytes per 10×10 game record.
pub(crate) const GAME10_RECORD_LEN: usize = 104;
/// Why writing a file cannot run out of header counts.
const MORE_RECORDS: &str = "more records than a WTHOR header counts";
/// Bytes per player name record (`WTHOR.JOU`).
pub(crate) const PLAYER_RECORD_LEN: usize = 20;
/// Bytes per tournament name record (`WTHOR.TRN`).
pub(crate) const TOURNAMENT_RECORD_LEN: usize = 26;
/// Offset of the first move byte within a game record.
pub(crate) const MOVES_OFFSET: usize = 8;

/// A WTHOR file's 16-byte header, every field kept (including the reserved byte) so
/// that writing gives back the same bytes; read from a file ([`super::FileSummary`]),
/// never made outside the crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Header {
    /// Century of creation (e.g. 20).
    pub century: u8,
    /// Year of creation within the century.
    pub year_in_century: u8,
    /// Month of creation.
    pub month: u8,
    /// Day of creation.
    pub day: u8,
    /// N1: number of game records.
    pub n1: u32,
    /// N2: number of name records.
    pub n2: u16,
    /// The year of the games in the file.
    pub game_year: u16,
    /// P1: board size (0 or 8: 8×8; 10: 10×10).
    pub board_size: u8,
    /// P2: game type (0 normal games, 1 solitaires).
    pub game_type: u8,
    /// P3: number of empty squares at which the theoretical score was computed.
    pub depth: u8,
    /// The last, reserved byte.
    pub reserved: u8,
}

impl Header {
    /// Decodes the first 16 bytes. The caller checks the length.
    pub(crate) fn decode(b: &[u8; HEADER_LEN]) -> Header {
        Header {
            century: b[0],
            year_in_century: b[1],
            month: b[2],
            day: b[3],
            n1: LE::read_u32(&b[4..8]),
            n2: LE::read_u16(&b[8..10]),
            game_year: LE::read_u16(&b[10..12]),
            board_size: b[12],
            game_type: b[13],
            depth: b[14],
            reserved: b[15],
        }
    }

    /// The 16 bytes of this header.
    pub(crate) fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0] = self.century;
        b[1] = self.year_in_century;
        b[2] = self.month;
        b[3] = self.day;
        LE::write_u32(&mut b[4..8], self.n1);
        LE::write_u16(&mut b[8..10], self.n2);
        LE::write_u16(&mut b[10..12], self.game_year);
        b[12] = self.board_size;
        b[13] = self.game_type;
        b[14] = self.depth;
        b[15] = self.reserved;
        b
    }

    /// Creation date as `YYYY-MM-DD`.
    pub fn created(&self) -> String {
        format!("{:04}-{:02}-{:02}", self.century as u32 * 100 + self.year_in_century as u32, self.month, self.day)
    }

    /// A header for a new file created today-ish: the caller sets the counts.
    pub fn new(game_year: u16, depth: u8) -> Header {
        Header {
            century: 20,
            year_in_century: 26,
            month: 1,
            day: 1,
            n1: 0,
            n2: 0,
            game_year,
            board_size: 8,
            game_type: 0,
            depth,
            reserved: 0,
        }
    }
}

/// A game record as stored, with `MOVES` move bytes: 60 for 8×8 games, 96 for 10×10.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameRecord<const MOVES: usize> {
    /// Tournament id (index into `WTHOR.TRN`).
    pub tournament: u16,
    /// Black player id (index into `WTHOR.JOU`).
    pub black: u16,
    /// White player id.
    pub white: u16,
    /// Black's disc count at the end of the game (empties to the winner).
    pub black_score: u8,
    /// Black's disc count under perfect play from the position with P3 empties.
    pub theoretical_score: u8,
    /// Move bytes, `10 * row + col`, zero-padded (kept raw for 10×10 games).
    pub moves: [u8; MOVES],
}

/// An 8×8 game record (68 bytes).
pub type RawGame = GameRecord<60>;
/// A 10×10 game record (104 bytes): the metadata is read; the moves are kept, not replayed.
pub(crate) type RawGame10 = GameRecord<96>;

impl<const MOVES: usize> GameRecord<MOVES> {
    /// Decodes one record of `MOVES_OFFSET + MOVES` bytes.
    pub(crate) fn decode(b: &[u8]) -> Self {
        let mut moves = [0u8; MOVES];
        moves.copy_from_slice(&b[MOVES_OFFSET..MOVES_OFFSET + MOVES]);
        GameRecord {
            tournament: LE::read_u16(&b[0..2]),
            black: LE::read_u16(&b[2..4]),
            white: LE::read_u16(&b[4..6]),
            black_score: b[6],
            theoretical_score: b[7],
            moves,
        }
    }

    /// Appends the bytes of this record.
    pub(crate) fn encode_into(&self, out: &mut Vec<u8>) {
        let mut b = [0u8; MOVES_OFFSET];
        LE::write_u16(&mut b[0..2], self.tournament);
        LE::write_u16(&mut b[2..4], self.black);
        LE::write_u16(&mut b[4..6], self.white);
        b[6] = self.black_score;
        b[7] = self.theoretical_score;
        out.extend_from_slice(&b);
        out.extend_from_slice(&self.moves);
    }
}

/// What a WTHOR file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// `.wtb`: 8×8 games.
    Games,
    /// `.wtd` or P1 = 10: 10×10 games.
    Games10,
    /// `.JOU`: player names.
    Players,
    /// `.TRN`: tournament names.
    Tournaments,
}

impl FileKind {
    /// Guesses the kind from the file name (extension, any case), then from the header:
    /// N1 > 0 means games, P1 = 10 means 10×10.
    pub(crate) fn detect(name: &str, header: &Header) -> FileKind {
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".jou") {
            FileKind::Players
        } else if lower.ends_with(".trn") {
            FileKind::Tournaments
        } else if lower.ends_with(".wtd") || header.board_size == 10 {
            FileKind::Games10
        } else {
            FileKind::Games
        }
    }

    /// Bytes per record.
    pub(crate) fn record_len(self) -> usize {
        match self {
            FileKind::Games => GAME_RECORD_LEN,
            FileKind::Games10 => GAME10_RECORD_LEN,
            FileKind::Players => PLAYER_RECORD_LEN,
            FileKind::Tournaments => TOURNAMENT_RECORD_LEN,
        }
    }
}

/// The records of a parsed file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Records {
    /// 8×8 games.
    Games(Vec<RawGame>),
    /// 10×10 games.
    Games10(Vec<RawGame10>),
    /// Name records (players or tournaments), raw Latin-1 bytes, zero-padded.
    Names(Vec<Vec<u8>>),
}

/// A parsed WTHOR file: header, records and any anomaly of the file's structure.
#[derive(Clone, Debug)]
pub struct ThorFile {
    /// File name as given (used in messages).
    pub name: String,
    /// What it holds.
    pub kind: FileKind,
    /// The header.
    pub header: Header,
    /// The complete records found.
    pub records: Records,
}

/// Decodes a name record: Latin-1, up to the first NUL.
pub(crate) fn decode_name(raw: &[u8]) -> String {
    raw.iter().take_while(|&&b| b != 0).map(|&b| b as char).collect()
}

impl ThorFile {
    /// Parses a file's bytes. Structural problems that still let records be read (a
    /// count that disagrees with the size, a trailing partial record) are returned as
    /// anomalies beside the file; problems that leave nothing to read are errors.
    pub fn parse(name: &str, bytes: &[u8]) -> Result<(ThorFile, Vec<Anomaly>), Anomaly> {
        let file_anomaly = |kind| Anomaly::file(name, kind);
        let Some(head) = bytes.first_chunk::<HEADER_LEN>() else {
            return Err(file_anomaly(AnomalyKind::TooShort { len: bytes.len() }));
        };
        let header = Header::decode(head);
        let kind = FileKind::detect(name, &header);
        if header.game_type == 1 && matches!(kind, FileKind::Games | FileKind::Games10) {
            return Err(file_anomaly(AnomalyKind::Solitaire));
        }
        if !matches!(header.board_size, 0 | 8 | 10) {
            return Err(file_anomaly(AnomalyKind::BoardSize { p1: header.board_size }));
        }
        let record_len = kind.record_len();
        let declared = match kind {
            FileKind::Games | FileKind::Games10 => header.n1 as usize,
            FileKind::Players | FileKind::Tournaments => header.n2 as usize,
        };
        let body = &bytes[HEADER_LEN..];
        let complete = body.len() / record_len;
        let mut anomalies = Vec::new();
        if body.len() != declared * record_len {
            anomalies.push(file_anomaly(AnomalyKind::SizeMismatch {
                declared,
                record_len,
                expected: HEADER_LEN + declared * record_len,
                actual: bytes.len(),
            }));
        }
        let count = declared.min(complete);
        let chunks = body.chunks_exact(record_len).take(count);
        let records = match kind {
            FileKind::Games => Records::Games(chunks.map(RawGame::decode).collect()),
            FileKind::Games10 => Records::Games10(chunks.map(RawGame10::decode).collect()),
            FileKind::Players | FileKind::Tournaments => Records::Names(chunks.map(<[u8]>::to_vec).collect()),
        };
        Ok((ThorFile { name: name.to_string(), kind, header, records }, anomalies))
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        match &self.records {
            Records::Games(g) => g.len(),
            Records::Games10(g) => g.len(),
            Records::Names(n) => n.len(),
        }
    }

    /// The file's bytes: the header with N1/N2 set to the record count, then the
    /// records. For a file read without anomalies, these are the bytes it was read from.
    ///
    /// # Panics
    /// With more records than the header can count (2^32 − 1 games, 65,535 names);
    /// no file read has more.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut header = self.header;
        match self.kind {
            FileKind::Games | FileKind::Games10 => header.n1 = u32::try_from(self.len()).expect(MORE_RECORDS),
            FileKind::Players | FileKind::Tournaments => header.n2 = u16::try_from(self.len()).expect(MORE_RECORDS),
        }
        let mut out = Vec::with_capacity(HEADER_LEN + self.len() * self.kind.record_len());
        out.extend_from_slice(&header.encode());
        match &self.records {
            Records::Games(games) => games.iter().for_each(|g| g.encode_into(&mut out)),
            Records::Games10(games) => games.iter().for_each(|g| g.encode_into(&mut out)),
            Records::Names(names) => {
                let len = self.kind.record_len();
                for n in names {
                    let mut rec = n.clone();
                    rec.resize(len, 0);
                    out.extend_from_slice(&rec);
                }
            }
        }
        out
    }
}
