//! The checks each fuzz target (`fuzz/`, `scripts/fuzz.sh`) runs on one input, here so
//! that the regression tests replay the inputs the fuzzers found through exactly the
//! same code. Each function takes any bytes and panics only when thorbook breaks a
//! promise: a parser or session panicking, or a documented round trip failing.
// Input handling: every narrowing or sign-changing conversion is checked (`try_from`,
// `from_le_bytes`), never a silent `as`.
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_possible_wrap)]

use std::sync::{Mutex, OnceLock};

use crate::book::format::{block_checksum, BLOCK_LOG2_RANGE, CHECKSUM_LEN, COUNTS_LEN, HEADER_LEN, RECORD_LEN};
use crate::book::interchange::{export, import, EdaxDate, ExportFormat};
use crate::book::query::{book_line, choose_move, query, BookChoice};
use crate::book::{walk, Book, BookSource};
use crate::engine::nboard::{self, NBoardSession};
use crate::engine::{ggf, gtp, Engine, EngineConfig};
use crate::eval::{AnyEval, Weights};
use crate::explorer::Explorer;
use crate::obf::parse_obf;
use crate::search::{Settings, Strength};
use crate::square::{format_moves, parse_move_sequence};
use crate::thor::format::ThorFile;
use crate::thor::format::{HEADER_LEN as THOR_HEADER_LEN, PLAYER_RECORD_LEN, TOURNAMENT_RECORD_LEN};
use crate::thor::{bundled_sources, GameFilter, GameText, LoadOptions, Source, ThorDatabase};
use crate::{Color, Position};

/// Runs one input's check with rayon's work on the fuzzing thread itself: the global
/// pool would start worker threads that are never joined, and at exit LeakSanitizer
/// (cargo-fuzz's default address sanitizer) reports what their thread-locals hold. A
/// one-thread pool made of the calling thread starts none; it lives in a static, made
/// once for every input. (Threads the checks start themselves must be joined, not
/// only finished: the text readers' splitter was the 32-byte leak the fuzzers saw.)
/// Every target goes through here, from the one fuzzing thread.
pub fn on_this_thread<R: Send>(check: impl FnOnce() -> R + Send) -> R {
    static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .use_current_thread()
            .build()
            .expect("a pool of the current thread needs no new thread")
    })
    .install(check)
}

/// A target's check: any bytes in, a panic only on a broken promise.
pub type Check = fn(&[u8]);

/// Every target, as `cargo fuzz list` names it, with its check.
pub const TARGETS: [(&str, Check); 17] = [
    ("thor_file", thor_file),
    ("book_open", book_open),
    ("book_import", book_import),
    ("position_text", position_text),
    ("obf", obf),
    ("ggf", ggf),
    ("game_archive", game_archive),
    ("gtp", gtp),
    ("nboard", nboard),
    ("explorer", explorer),
    ("eval_weights", eval_weights),
    ("leaf_log", leaf_log),
    ("shard_file", shard_file),
    ("nodes_file", nodes_file),
    ("plan_json", plan_json),
    ("build_checkpoint", build_checkpoint),
    ("label_store", label_store),
];

/// Runs target `name` on `data`; `false` for an unknown name.
pub fn run(name: &str, data: &[u8]) -> bool {
    match TARGETS.iter().find(|(target, _)| *target == name) {
        Some((_, check)) => {
            check(data);
            true
        }
        None => false,
    }
}

/// The engine the protocol targets drive: bundled book and evaluation, a 1 MiB table,
/// and a strength each target sets so that an input runs in milliseconds.
fn shared_engine() -> std::sync::MutexGuard<'static, Engine<AnyEval>> {
    static ENGINE: OnceLock<Mutex<Engine<AnyEval>>> = OnceLock::new();
    ENGINE
        .get_or_init(|| {
            let config =
                EngineConfig { search: Settings { hash_mib: 1, ..Settings::default() }, ..EngineConfig::default() };
            Mutex::new(Engine::new(config).expect("a valid configuration"))
        })
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

/// Depth 2, exact at 6 empties, 20,000 nodes.
const SHALLOW: Strength =
    Strength { depth: Some(2), exact_at: Some(6), time: None, nodes: Some(20_000), selectivity: None };

/// Makes a book's checksums fit its bytes (the block checksums, the table's CRC-32 and
/// the header's), where the header's sizes describe the file; else the header's only.
fn repair_checksums(bytes: &mut [u8]) {
    if bytes.len() < HEADER_LEN {
        return;
    }
    let word = |b: &[u8], at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
    let count = usize::try_from(u64::from_le_bytes(bytes[20..28].try_into().unwrap_or_default())).unwrap_or(0);
    let (log2, large) = (bytes[49], word(bytes, 52) as usize);
    let blocks = if BLOCK_LOG2_RANGE.contains(&log2) { count.div_ceil(1 << log2) } else { 0 };
    let records_end = count.checked_mul(RECORD_LEN).and_then(|n| n.checked_add(HEADER_LEN));
    let counts_end = records_end.and_then(|e| large.checked_mul(COUNTS_LEN).and_then(|n| n.checked_add(e)));
    if let Some(counts_end) = counts_end.filter(|&e| e.checked_add(CHECKSUM_LEN * (blocks + 1)) == Some(bytes.len())) {
        let mut table = Vec::with_capacity(CHECKSUM_LEN * (blocks + 1));
        for block in 0..blocks {
            let start = HEADER_LEN + (block << log2) * RECORD_LEN;
            let end = (start + (RECORD_LEN << log2)).min(counts_end - large * COUNTS_LEN);
            table.extend_from_slice(&block_checksum(&bytes[start..end]).to_le_bytes());
        }
        table.extend_from_slice(&block_checksum(&bytes[counts_end - large * COUNTS_LEN..counts_end]).to_le_bytes());
        bytes[counts_end..].copy_from_slice(&table);
        let crc = crc32fast::hash(&table);
        bytes[56..60].copy_from_slice(&crc.to_le_bytes());
    }
    let header = crc32fast::hash(&bytes[..60]);
    bytes[60..64].copy_from_slice(&header.to_le_bytes());
}

/// The bundled `WTHOR.JOU` and `WTHOR.TRN` cut to their first 64 names.
fn name_file_prefixes() -> Vec<Source> {
    const NAMES_KEPT: u16 = 64;
    let cut = |source: Source| {
        let record_len = if source.name.ends_with("JOU") { PLAYER_RECORD_LEN } else { TOURNAMENT_RECORD_LEN };
        let len = THOR_HEADER_LEN + usize::from(NAMES_KEPT) * record_len;
        let mut bytes = source.bytes()[..len].to_vec();
        bytes[8..10].copy_from_slice(&NAMES_KEPT.to_le_bytes());
        Source::from_vec(&source.name, bytes)
    };
    bundled_sources().into_iter().filter(|s| !s.name.ends_with(".wtb")).map(cut).collect()
}

fn bundled_explorer() -> &'static Explorer {
    static EXPLORER: OnceLock<Explorer> = OnceLock::new();
    EXPLORER.get_or_init(|| {
        let db = ThorDatabase::load(&bundled_sources(), LoadOptions { strict: false, index: true })
            .expect("the bundled archives load");
        let book = BookSource::Bundled.open().expect("the bundled book opens");
        Explorer::new(db, book).with_max_engine_level(0)
    })
}

const METHODS: [&str; 4] = ["GET", "HEAD", "POST", "get"];

const NAMES: [&str; 4] = ["WTH_2001.wtb", "WTHOR.JOU", "WTHOR.TRN", "WTH_2001.wtd"];

/// A WTHOR file (games, players or tournaments, chosen by the first byte) loaded the
/// way `thor` commands load archives: parsed, every game validated and replayed, the
/// position index built and queried; then written back and read again.
pub fn thor_file(data: &[u8]) {
    let Some((&selector, bytes)) = data.split_first() else { return };
    let name = NAMES[usize::from(selector & 3)];

    // A file read without anomalies is written back byte for byte.
    if let Ok((file, anomalies)) = ThorFile::parse(name, bytes) {
        if anomalies.is_empty() {
            assert_eq!(file.to_bytes(), bytes, "{name} does not survive a read and a write");
        }
    }

    let mut sources = vec![Source::from_vec(name, bytes.to_vec())];
    if selector & 4 != 0 {
        // With player and tournament files (the bundled ones' first names, to keep
        // each run short), ids are checked against them.
        sources.extend(name_file_prefixes());
    }
    let strict = selector & 8 != 0;
    let Ok(db) = ThorDatabase::load(&sources, LoadOptions { strict, index: true }) else { return };
    let stats = db.stats(&Position::START, &GameFilter::default());
    assert!(stats.games <= db.games.len());
    for game in db.games.iter().take(8) {
        let _ = game.transcript();
        let _ = db.black_name(game);
        let _ = db.tournament_name(game);
    }

    // Every valid game survives an export and a reload, with its year and P3.
    crate::testutil::assert_export_reloads(&db);
}

/// A book file as the engine and `book` commands meet it: opened in constant time
/// (header checks only), then probed, walked and queried without `verify` (what the
/// engine does with `--book FILE`), and when `verify` passes, exported to the three
/// interchange formats. The first byte says whether to repair the checksums first, so
/// that mutations reach the records instead of stopping at a checksum. A record from a
/// block that fails its checksum is never returned.
pub fn book_open(data: &[u8]) {
    let Some((&selector, bytes)) = data.split_first() else { return };
    let mut bytes = bytes.to_vec();
    if selector & 1 != 0 {
        repair_checksums(&mut bytes);
    }
    let Ok(book) = Book::open(bytes) else { return };
    let _ = book.params();
    // Before any verification, a probe checks the blocks it reads: what it returns
    // is what the verified book holds.
    let lazy = book.probe(&Position::START.board);
    for r in book.records().take(256) {
        let _ = (r.leaf(), r.leaf_level(), r.leaf_exact());
    }
    let verified = book.verify().is_ok();
    if verified {
        assert!(book.damage().is_none(), "a probe found damage that verify did not: {:?}", book.damage());
        assert_eq!(lazy, book.probe(&Position::START.board), "a probe before verify read another record");
    }
    // `walk` reaches every position linked from the start; a few of them are queried
    // the ways `book query`, the engine and NBoard hints do.
    let boards = walk(&book);
    let mut positions: Vec<Position> = vec![Position::START];
    positions.extend(boards.values().take(7).map(|&board| Position { board, side: Color::Black }));
    for (seed, pos) in (0u64..).zip(&positions) {
        let _ = book.probe(&pos.board);
        let _ = query(&book, pos);
        let _ = choose_move(&book, pos, BookChoice::default(), seed);
    }
    let line = book_line(&book, &Position::START, 60);
    assert!(Position::START.play_sequence(&line).is_ok(), "the book line {line:?} is not playable");
    if verified {
        for format in [ExportFormat::Text, ExportFormat::Edax(EdaxDate::default()), ExportFormat::Egaroucid] {
            let _ = export(&book, format);
        }
    }
}

/// `book import`: any bytes, recognised by content (Edax `book.dat`, Edax text,
/// Egaroucid `.egbk3`, thorbook text or binary). What imports is a valid book, and its
/// thorbook text export imports back to the same bytes.
pub fn book_import(data: &[u8]) {
    let Ok(imported) = import(data) else { return };
    let book = Book::open_verified(&imported.bytes[..]).expect("an imported book verifies");
    assert_eq!(book.len(), imported.positions);
    let text = export(&book, ExportFormat::Text).expect("a verified book exports as text");
    let again = import(&text.bytes).expect("thorbook text export imports");
    assert_eq!(again.bytes, imported.bytes, "text round trip changed the book");
}

/// What users type for a position: board text (`--board`, FFO/Edax style) and move
/// sequences (`--moves`). What parses round-trips through thorbook's own notation.
pub fn position_text(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(pos) = Position::parse_board_text(text) {
        let again = Position::parse_board_text(&pos.to_board_text()).expect("board text reparses");
        assert_eq!(again, pos);
        let _ = pos.diagram();
        let _ = pos.legal_squares();
        let _ = crate::openings::at(&pos.board);
    }
    if let Ok(moves) = parse_move_sequence(text) {
        assert_eq!(parse_move_sequence(&format_moves(&moves)).expect("formatted moves reparse"), moves);
        if let Ok(pos) = Position::START.play_sequence(&moves) {
            assert_eq!(Position::from_moves(text).expect("the same sequence plays"), pos);
            let _ = crate::openings::name_line(&moves);
        }
    }
}

/// FFO/Edax `.obf` problem files (`solve FILE`).
pub fn obf(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(problems) = parse_obf(text) else { return };
    for p in &problems {
        let best = p.best_moves();
        assert_eq!(best.is_empty(), p.best_score().is_none());
        let _ = p.position.board.legal_moves();
    }
}

const ARCHIVE_NAMES: [&str; 4] = ["games.ggf", "games.txt", "games.jsonl", "games"];

/// Text game archives (GGF as GGS ships it, transcripts, JSON lines; the first byte
/// picks the file name, which only hints: the content decides) loaded the way every
/// command loads them. Each game read is written in the three text formats and read
/// back to the same moves and result (games without a move, which WTHOR files can hold,
/// are skipped by the text readers).
pub fn game_archive(data: &[u8]) {
    let Some((&selector, bytes)) = data.split_first() else { return };
    let name = ARCHIVE_NAMES[usize::from(selector & 3)];
    let source = Source::from_vec(name, bytes.to_vec());
    let Ok(db) = ThorDatabase::load(&[source], LoadOptions { strict: selector & 4 != 0, index: true }) else {
        return;
    };
    for a in &db.anomalies {
        let _ = a.to_string();
    }
    // The text readers replay while they check; WTHOR's replay of the same moves is
    // the reference.
    for g in &db.games {
        assert_eq!(crate::thor::replay::replay(&g.raw).ok(), Some(g.replay), "line {}", g.record);
    }
    let _ = db.stats(&Position::START, &GameFilter::default());
    // A game without a move (a WTHOR record may be one) has no line in the text formats.
    let key = |db: &ThorDatabase| -> Vec<(String, Option<u8>)> {
        db.games.iter().filter(|g| g.replay.move_count > 0).map(|g| (g.transcript(), g.black_discs())).collect()
    };
    for (text, name) in [(GameText::Ggf, "x.ggf"), (GameText::Transcript, "x.txt"), (GameText::Jsonl, "x.jsonl")] {
        let written: String = db.games.iter().map(|g| db.write_game(g, text) + "\n").collect();
        let again = ThorDatabase::load(&[Source::from_vec(name, written.into_bytes())], LoadOptions::default())
            .expect("a written archive loads");
        assert!(again.anomalies.is_empty(), "{name}: {:?}", again.anomalies.first());
        assert_eq!(key(&again), key(&db), "{name} does not read back to the same games");
    }
}

/// GGF games (NBoard's `set game`, `play --ggf`): what parses is written back and
/// parses to the same game, names, result and time control.
pub fn ggf(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(g) = ggf::parse(text) else { return };
    let written = ggf::write(&g.game, &g.black, &g.white, g.time.as_deref());
    let again = ggf::parse(&written).unwrap_or_else(|e| panic!("written GGF does not parse: {e}\n{written}"));
    assert_eq!(again.game.start(), g.game.start());
    assert_eq!(again.game.moves(), g.game.moves());
    assert_eq!((again.black, again.white, again.time), (g.black, g.white, g.time));
}

/// GTP sessions: any sequence of lines through the real loop (`thorbook gtp`), driving
/// the engine with the bundled book and evaluation. The engine is kept shallow
/// (`SHALLOW`) so that an input runs in well under a millisecond; the protocol cannot
/// deepen it (GTP's time commands only lower a budget).
pub fn gtp(data: &[u8]) {
    let mut engine = shared_engine();
    engine.set_strength(SHALLOW);
    let mut out = Vec::new();
    gtp::run(&mut engine, std::io::Cursor::new(data.to_vec()), &mut out).expect("writing to memory");
    let text = String::from_utf8(out).expect("replies are UTF-8");
    assert!(text.is_empty() || text.starts_with('=') || text.starts_with('?'), "reply {text:?}");
}

/// NBoard sessions: any sequence of lines, parsed and handled as `thorbook nboard`
/// does, driving the engine with the bundled book and evaluation. `set depth N` is
/// clamped to 1..=2 here so an input runs in about a millisecond; everything else is as
/// sent.
pub fn nboard(data: &[u8]) {
    let mut engine = shared_engine();
    engine.set_strength(Strength::for_depth(1));
    let mut session = NBoardSession::new(&mut engine);
    let mut out = Vec::new();
    for line in data.split(|&b| b == b'\n') {
        let line = String::from_utf8_lossy(line);
        let command = match nboard::parse_line(line.strip_suffix('\r').unwrap_or(&line)) {
            Ok(Some(nboard::Command::Quit)) => return,
            Ok(Some(nboard::Command::SetDepth(d))) => nboard::Command::SetDepth(d.clamp(1, 2)),
            Ok(Some(command)) => command,
            Ok(None) | Err(_) => continue,
        };
        let _ = session.handle(command, &mut out).expect("writing to memory");
    }
}

/// The explorer's request handling (`thorbook explore`): any method and request target
/// against the bundled archives and book. Engine scores are turned off here (they are
/// fuzzed through GTP and NBoard); a `level` parameter is still parsed and refused.
pub fn explorer(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else { return };
    let Ok(url) = std::str::from_utf8(rest) else { return };
    let method = METHODS[usize::from(selector & 3)];
    let reply = bundled_explorer().respond(method, url);
    assert!(matches!(reply.status, 200 | 400 | 404 | 405 | 414), "status {} for {method} {url}", reply.status);
    if reply.content_type == "application/json" {
        serde_json::from_slice::<serde_json::Value>(&reply.body).expect("JSON replies are JSON");
    }
}

/// Evaluation weight files (`--eval FILE`), plain or gzip-compressed. The first byte
/// says whether to repair the CRC-32 of a plain file first, so that mutations get past
/// the checksum to the ProbCut table and the note.
pub fn eval_weights(data: &[u8]) {
    let Some((&selector, bytes)) = data.split_first() else { return };
    let mut bytes = bytes.to_vec();
    if selector & 1 != 0 && bytes.len() >= 4 {
        let end = bytes.len() - 4;
        let crc = crc32fast::hash(&bytes[..end]);
        bytes[end..].copy_from_slice(&crc.to_le_bytes());
    }
    if let Ok(w) = Weights::from_bytes(std::path::Path::new("fuzz.tbe"), &bytes) {
        assert_eq!(
            Weights::from_bytes(std::path::Path::new("again.tbe"), &w.to_bytes())
                .expect("written weights read back")
                .digest(),
            w.digest()
        );
    }
}

/// Search logs (`book audit` and `book fix` checkpoints) read as a resumed run reads
/// them. The first byte says whether to repair the entries' checksums first, so that
/// mutations reach the move and score checks: whatever reads holds only keys of its
/// entries, with moves and scores in range.
pub fn leaf_log(data: &[u8]) {
    let Some((&selector, bytes)) = data.split_first() else { return };
    let mut bytes = bytes.to_vec();
    if selector & 1 != 0 && bytes.len() > 32 {
        for e in bytes[32..].chunks_exact_mut(16) {
            let crc = crc32fast::hash(&e[..12]);
            e[12..].copy_from_slice(&crc.to_le_bytes());
        }
    }
    if let Ok(done) = crate::book::build::leaflog::LeafLog::parse(&bytes) {
        assert!(done.len() <= bytes.len().saturating_sub(32) / 16);
        for leaf in done.values() {
            assert!(leaf.mv.is_valid() && (-64..=64).contains(&leaf.score));
        }
    }
}

/// Writes the CRC-32 of each whole 16-byte entry's first 12 bytes into its last 4, so
/// that mutations reach the checks behind the checksum.
fn repair_entries(entries: &mut [u8]) {
    for e in entries.chunks_exact_mut(16) {
        let crc = crc32fast::hash(&e[..12]);
        e[12..].copy_from_slice(&crc.to_le_bytes());
    }
}

/// A leaf as every reader must leave it: a move (or pass, or none) and a score in range.
fn assert_leaf(leaf: &crate::book::build::Leaf) {
    assert!(leaf.mv.is_valid() && (-64..=64).contains(&leaf.score), "{leaf:?}");
}

/// A plan's shard files (`shard-IIII.tbs`) and checkpoints (`.partial`), read as
/// assembly and a resumed shard read them. The first byte: bit 0 rebuilds the file
/// around its entries (magic, count, trailer, checksums) so that mutations reach the
/// entries' own checks; the rest is the selectivity entries are decoded with. Whatever
/// reads holds the count the header names, in strictly increasing key order, every
/// leaf in range.
pub fn shard_file(data: &[u8]) {
    use crate::book::cluster::plan::shard::{parse_partial, parse_shard, SHARD_HEADER};
    let Some((&selector, bytes)) = data.split_first() else { return };
    let mut bytes = bytes.to_vec();
    if bytes.len() < SHARD_HEADER {
        return;
    }
    if selector & 1 != 0 {
        let body_len = (bytes.len().saturating_sub(SHARD_HEADER + 24)) / 16 * 16;
        let mut body = bytes[SHARD_HEADER..SHARD_HEADER + body_len].to_vec();
        repair_entries(&mut body);
        let n = (body_len / 16) as u64;
        let mut header = bytes[..SHARD_HEADER].to_vec();
        header[..8].copy_from_slice(b"TBSHARD1");
        header[24..32].copy_from_slice(&n.to_le_bytes());
        let crc = crc32fast::hash(&body);
        bytes = [header, body].concat();
        bytes.extend_from_slice(b"TBSHDEND");
        bytes.extend_from_slice(&n.to_le_bytes());
        bytes.extend_from_slice(&crc.to_le_bytes());
        bytes.extend_from_slice(&[0; 4]);
    }
    let header: [u8; SHARD_HEADER] = bytes[..SHARD_HEADER].try_into().expect("a whole header");
    let positions =
        usize::try_from(u64::from_le_bytes(header[24..32].try_into().expect("8 bytes"))).unwrap_or(usize::MAX);
    let decode = |e: &[u8]| crate::book::build::leaflog::decode_leaf_entry(e, selector >> 1);
    if let Ok(leaves) = parse_shard(&bytes, &header, positions, decode) {
        assert_eq!(leaves.len(), positions);
        assert!(leaves.windows(2).all(|w| w[0].0 < w[1].0));
        leaves.iter().for_each(|(_, leaf)| assert_leaf(leaf));
    }
    if let Ok(done) = parse_partial(&bytes, &header, decode) {
        assert!(done.len() <= (bytes.len() - SHARD_HEADER) / 16);
        done.values().for_each(assert_leaf);
    }
}

/// A plan's positions file (`nodes.bin`) read as a stream, as opening a plan and
/// assembling read it. The first byte: bit 0 rebuilds the count and the checksum
/// around the positions so that mutations reach each position's checks. A reader
/// that reaches the end has read the count the header names, in strictly increasing
/// key order, each key its board's.
pub fn nodes_file(data: &[u8]) {
    use crate::book::build::nodes::NodeReader;
    let Some((&selector, bytes)) = data.split_first() else { return };
    let mut bytes = bytes.to_vec();
    if selector & 1 != 0 && bytes.len() >= 24 {
        let n = (bytes.len() - 24) / 40;
        bytes.truncate(16 + n * 40);
        bytes[..8].copy_from_slice(b"TBNODES1");
        bytes[8..16].copy_from_slice(&(n as u64).to_le_bytes());
        let crc = crc32fast::hash(&bytes);
        bytes.extend_from_slice(&crc.to_le_bytes());
        bytes.extend_from_slice(&[0; 4]);
    }
    let Ok(mut reader) = NodeReader::from_bytes(std::path::Path::new("nodes.bin"), &bytes) else { return };
    let count = u64::from_le_bytes(bytes[8..16].try_into().expect("a whole header"));
    let (mut read, mut last) = (0u64, None);
    while let Ok(next) = reader.next() {
        let Some(node) = next else {
            assert_eq!(read, count, "the end before the count");
            return;
        };
        assert_eq!(node.key, node.board.key());
        assert!(last.is_none_or(|k| k < node.key));
        last = Some(node.key);
        read += 1;
    }
}

/// `plan.json` read as opening a plan reads it (before its positions and evaluation):
/// whatever is accepted writes out and reads back the same.
pub fn plan_json(data: &[u8]) {
    use crate::book::cluster::plan::spec::{to_json, PlanFile};
    let Ok(text) = std::str::from_utf8(data) else { return };
    let path = std::path::Path::new("plan.json");
    if let Ok(file) = PlanFile::parse(path, text) {
        let _ = file.strength();
        let again = to_json(&file, path).expect("a plan read from JSON writes as JSON");
        assert_eq!(PlanFile::parse(path, &again).expect("a written plan reads back"), file);
    }
}

/// A build's checkpoint (`OUT.checkpoint`) read as `book build --resume` reads it.
/// The first byte: bit 0 repairs the entries' checksums; bit 1 asks for another
/// build's header (the file's with one byte changed, chosen by the rest of the
/// byte), whose entries must be refused. Whatever reads holds at most one leaf an
/// entry, each in range.
pub fn build_checkpoint(data: &[u8]) {
    use crate::book::build::checkpoint::{Checkpoint, CHECKPOINT_HEADER};
    let Some((&selector, bytes)) = data.split_first() else { return };
    let mut bytes = bytes.to_vec();
    let mut want = [0u8; CHECKPOINT_HEADER];
    if bytes.len() >= CHECKPOINT_HEADER {
        want.copy_from_slice(&bytes[..CHECKPOINT_HEADER]);
        if selector & 1 != 0 {
            repair_entries(&mut bytes[CHECKPOINT_HEADER..]);
        }
    }
    let other = selector & 2 != 0;
    if other {
        want[8 + usize::from(selector >> 2) % 48] ^= 1;
    }
    if let Ok(done) = Checkpoint::parse(&bytes, &want) {
        // A file cut inside its header holds nothing, whoever's header it was.
        assert!(
            !other || (bytes.len() < CHECKPOINT_HEADER && done.is_empty()),
            "another build's entries were accepted"
        );
        assert!(done.len() <= bytes.len().saturating_sub(CHECKPOINT_HEADER) / 16);
        done.values().for_each(assert_leaf);
    }
}

/// A training label store read as `train --labels` reads it. The first byte: bit 0
/// repairs each whole chunk's checksum so that mutations reach the records' checks.
/// Whatever reads is within the file and holds at most one label a record.
pub fn label_store(data: &[u8]) {
    use crate::train::labels::{LabelStore, RECORD};
    let Some((&selector, bytes)) = data.split_first() else { return };
    let mut bytes = bytes.to_vec();
    if selector & 1 != 0 {
        let mut at = 8;
        while let Some(count) = bytes.get(at..at + 4) {
            let count = u32::from_le_bytes(count.try_into().expect("4 bytes")) as usize;
            let Some(end) = count.checked_mul(RECORD).and_then(|n| n.checked_add(at + 8)).filter(|&e| e <= bytes.len())
            else {
                break;
            };
            let crc = crc32fast::hash(&bytes[at..end - 4]);
            bytes[end - 4..end].copy_from_slice(&crc.to_le_bytes());
            at = end;
        }
    }
    let mut store = LabelStore::in_memory();
    if let Ok(valid) = store.read("fuzz.labels", &bytes) {
        assert!(valid <= bytes.len());
        assert!(store.exact_len() + store.search_len() <= bytes.len() / RECORD);
    }
}
