//! Moving books between formats: Edax book.dat and text, Egaroucid .egbk3, thorbook
//! text. Round trips on built books, an independent reader of Edax's layout, a
//! hand-written Edax file with a pass position and a position without a leaf, and
//! located errors for truncated and foreign files.

use byteorder::{ByteOrder, LittleEndian as LE};
use thorbook::board::Board;
use thorbook::book::interchange::{
    self, BookFormat, EdaxDate, ExportFormat, ImportFault, InterchangeError, Location, Shortfall,
};
use thorbook::book::{Book, BookError, FieldFault, LeafMove, Record};
use thorbook::book::{BuildConfig, GameLine};
use thorbook::search::Settings;
use thorbook::testutil::searches::Searcher;
use thorbook::testutil::walk;
use thorbook::thor::{bundled_sources, LoadOptions, ThorDatabase};
use thorbook::Move;

use crate::util::{build_book_bytes, thorbook};

const DATE: EdaxDate = EdaxDate { year: 2026, month: 11, day: 23, hour: 6, minute: 0, second: 0 };

fn config(max_ply: u32, min_games: u32, depth: u32, exact_at: u32) -> BuildConfig {
    with!(
        BuildConfig::default(),
        max_ply: max_ply,
        min_games: min_games,
        search: with!(Settings::default(), depth: Some(depth), exact_at: Some(exact_at), hash_mib: 2),
    )
}

fn games() -> Vec<GameLine> {
    let db = ThorDatabase::load(&bundled_sources(), with!(LoadOptions::default(), strict: true, index: false)).unwrap();
    db.games().iter().map(GameLine::from).collect()
}

fn build(games: &[GameLine], cfg: &BuildConfig) -> Vec<u8> {
    build_book_bytes(games, cfg)
}

/// A book of whole games, some with passes, played to the end (exact leaves, pass
/// positions, game-over positions), searched shallowly.
fn mixed_book() -> Vec<u8> {
    let all = games();
    let mut chosen: Vec<GameLine> = all.iter().filter(|g| g.moves.contains(&Move::Pass)).take(3).cloned().collect();
    assert!(chosen.len() == 3, "the bundled archives hold games with passes");
    chosen.extend(all[..20].iter().cloned());
    build(&chosen, &config(60, 1, 2, 12))
}

/// Reads an Edax book the way Edax's `book_load`/`position_read` do, field by field,
/// independently of thorbook's importer.
struct EdaxPosition {
    player: u64,
    opponent: u64,
    wins: u32,
    draws: u32,
    losses: u32,
    lines: u32,
    value: i16,
    lower: i16,
    upper: i16,
    level: u8,
    links: Vec<(i8, u8)>,
    leaf: (i8, u8),
}

fn edax_read(bytes: &[u8]) -> (i32, Vec<EdaxPosition>) {
    assert_eq!(LE::read_u32(&bytes[0..4]), 0x4544_4158, "EDAX");
    assert_eq!(LE::read_u32(&bytes[4..8]), 0x424f_4f4b, "BOOK");
    assert_eq!(bytes[8], 4, "version");
    let n_nodes = LE::read_i32(&bytes[38..42]);
    let mut at = 42;
    let mut out = Vec::new();
    while at < bytes.len() {
        let p = &bytes[at..];
        let n_link = p[38] as usize;
        let links = (0..n_link).map(|i| (p[40 + 2 * i] as i8, p[41 + 2 * i])).collect();
        let leaf = (p[40 + 2 * n_link] as i8, p[41 + 2 * n_link]);
        out.push(EdaxPosition {
            player: LE::read_u64(&p[0..8]),
            opponent: LE::read_u64(&p[8..16]),
            wins: LE::read_u32(&p[16..20]),
            draws: LE::read_u32(&p[20..24]),
            losses: LE::read_u32(&p[24..28]),
            lines: LE::read_u32(&p[28..32]),
            value: LE::read_i16(&p[32..34]),
            lower: LE::read_i16(&p[34..36]),
            upper: LE::read_i16(&p[36..38]),
            level: p[39],
            links,
            leaf,
        });
        at += 42 + 2 * n_link;
    }
    assert_eq!(at, bytes.len(), "positions end exactly at the end of the file");
    (n_nodes, out)
}

/// Edax's "unique" board: the least (player, opponent) over the 8 symmetries.
fn edax_unique(b: &Board) -> Board {
    thorbook::Transform::ALL.iter().map(|t| t.board(b)).min_by_key(|b| (b.player, b.opponent)).unwrap()
}

#[test]
fn edax_export_is_what_edax_reads_and_round_trips() {
    let bytes = mixed_book();
    let book = Book::open_verified(&bytes[..]).unwrap();
    let boards = walk(&book);
    assert_eq!(boards.len(), book.len(), "a built book is reachable from the start");
    let exported = interchange::export(&book, ExportFormat::Edax(DATE)).unwrap();
    assert_eq!(exported.positions, book.len());
    let dat = &exported.bytes;
    assert_eq!(&dat[10..18], &[0xea, 0x07, 11, 23, 6, 0, 0, 0], "date as Edax writes it");

    // Edax's reader: every position found, canonical as Edax makes it, moves as the book says.
    let (n_nodes, positions) = edax_read(dat);
    assert_eq!(n_nodes as usize, book.len());
    assert_eq!(positions.len(), book.len());
    let mut passes = 0;
    for p in &positions {
        let board = Board { player: p.player, opponent: p.opponent };
        assert_eq!(edax_unique(&board), board, "Edax finds only unique boards");
        let r = book.get(board.key()).expect("an exported position is a book position");
        assert_eq!(p.value, r.value as i16);
        assert!(p.lower <= p.value && p.value <= p.upper);
        assert_eq!((p.wins, p.draws, p.lines), (r.wins, r.draws as u32, r.games));
        assert_eq!(p.wins + p.draws + p.losses, r.games);
        // Links: exactly the moves into the book, scored minus the child's value.
        let mut want = Vec::new();
        for (mv, child) in board.successors() {
            if let Some(c) = book.get(child.canonical().0.key()) {
                want.push((-c.value, if mv == Move::Pass { 64 } else { mv.square().unwrap().index() as u8 }));
            }
        }
        assert_eq!(p.links, want);
        passes += p.links.iter().any(|l| l.1 == 64) as usize;
        // The leaf: thorbook's, or Edax's "none" (-127, 65).
        match r.leaf() {
            None if board.is_game_over() => assert_eq!(p.leaf, (r.leaf_score, 65)),
            None => assert_eq!(p.leaf, (-127, 65)),
            Some(Move::Pass) => assert_eq!(p.leaf, (r.leaf_score, 64)),
            Some(Move::Place(sq)) => assert_eq!(p.leaf, (r.leaf_score, sq.index() as u8)),
        }
        assert!(!p.links.iter().any(|l| l.1 == p.leaf.1), "Edax refuses a leaf repeated as a link");
        assert_eq!(p.level, if r.leaf_exact() && r.leaf().is_some() { 60 } else { r.leaf_depth });
    }
    assert!(passes > 0, "the test book has pass positions");
    assert!(book.records().any(|r| r.leaf_exact() && r.leaf().is_some()), "and exact leaves");

    // Back to thorbook: every position, value, leaf and count (per-leaf selectivity has
    // no place in Edax's format; this book is full width, so it is 0 on both sides).
    let back = interchange::import(dat).unwrap();
    assert_eq!(back.format, BookFormat::EdaxBinary);
    let again = Book::open_verified(&back.bytes[..]).unwrap();
    assert_eq!(again.records().collect::<Vec<_>>(), book.records().collect::<Vec<_>>());
    // And out again: the same bytes.
    assert_eq!(interchange::export(&again, ExportFormat::Edax(DATE)).unwrap().bytes, *dat);
}

#[test]
fn egaroucid_and_text_round_trips() {
    let bytes = mixed_book();
    let book = Book::open_verified(&bytes[..]).unwrap();
    let eg = interchange::export(&book, ExportFormat::Egaroucid).unwrap();
    assert_eq!(&eg.bytes[..10], b"DICUORAGE\x03");
    assert!(eg.passes_folded > 0, "pass positions are folded");
    assert_eq!(LE::read_i32(&eg.bytes[10..14]) as usize, eg.positions);
    assert_eq!(eg.bytes.len(), 14 + 25 * eg.positions);
    let back = interchange::import(&eg.bytes).unwrap();
    assert_eq!(back.format, BookFormat::Egaroucid);
    assert_eq!(back.passes_added, eg.passes_folded, "and added back on import");
    let again = Book::open_verified(&back.bytes[..]).unwrap();
    assert_eq!(again.len(), book.len());
    for (a, b) in book.records().zip(again.records()) {
        // Egaroucid keeps no win or draw counts.
        let strip = |r: Record| Record { wins: 0, draws: 0, ..r };
        let (a, b) = (strip(a), strip(b));
        if a.games == 0 || b.leaf().is_none() && a.leaf().is_none() {
            assert_eq!((a.key, a.value, a.leaf_move), (b.key, b.value, b.leaf_move));
        } else {
            assert_eq!(a, b);
        }
    }

    let text = interchange::export(&book, ExportFormat::Text).unwrap();
    let back = interchange::import(&text.bytes).unwrap();
    assert_eq!(back.format, BookFormat::Text);
    assert_eq!(back.bytes, bytes, "text export then import is the identical book");
    // The back-up rule is header byte 48: a corrected book comes back corrected, and
    // an export written before the rule was (no `back_up=`) reads as negamax.
    let corrected = thorbook::book::revalue(&book, thorbook::book::BackUpRule::Corrected).unwrap();
    let corrected_book = Book::open_verified(&corrected[..]).unwrap();
    let text = interchange::export(&corrected_book, ExportFormat::Text).unwrap();
    assert_eq!(interchange::import(&text.bytes).unwrap().bytes, corrected, "a corrected book round trips");
    let old = String::from_utf8(text.bytes).unwrap().replace(" back_up=corrected", "");
    let back = Book::open_verified(interchange::import(old.as_bytes()).unwrap().bytes).unwrap();
    assert_eq!(back.params().back_up, thorbook::book::BackUpRule::Negamax);
    let bad = old.replacen("# params ", "# params back_up=minimax ", 1);
    let err = interchange::import(bad.as_bytes()).unwrap_err();
    assert!(
        matches!(
            err,
            InterchangeError::Invalid { at: Location::Line(2), what: ImportFault::Syntax { field: "back_up", .. }, .. }
        ),
        "{err}"
    );
}

/// A position where the side to move has exactly one move, after which the opponent
/// must pass, found by deterministic random play.
fn one_move_then_pass() -> (Board, thorbook::square::Square) {
    let mut rng = thorbook::testutil::Rng(0x1234_5678_9abc_def0);
    loop {
        let mut b = Board::START;
        loop {
            let moves = b.legal_moves();
            if moves == 0 {
                if b.opponent_moves() == 0 {
                    break;
                }
                b = b.pass();
                continue;
            }
            if moves.count_ones() == 1 {
                let sq = thorbook::board::Squares(moves).next().unwrap();
                let child = b.play(sq).unwrap();
                if child.must_pass()
                    && child.pass().legal_moves().count_ones() >= 2
                    && (8..=14).contains(&b.empty_count())
                {
                    return (b, sq);
                }
            }
            b = b.play(rng.pick(moves)).unwrap();
        }
    }
}

#[test]
fn a_hand_written_edax_book_with_a_pass_and_no_leaf_imports_correctly() {
    // A: one move, into B (a pass position: B's only link is the pass, to C); A has no
    // leaf (its one move is linked). C has a leaf: its best move, solved.
    let (a, sq) = one_move_then_pass();
    let b = a.play(sq).unwrap();
    let c = b.pass();
    let mut solver = Searcher::new(4);
    let c_best = thorbook::board::Squares(c.legal_moves())
        .map(|m| (-solver.exact(&c.play(m).unwrap()), m))
        .max_by_key(|&(s, m)| (s, std::cmp::Reverse(m.index())))
        .unwrap();
    let c_score = c_best.0 as i8;
    // Edax stores each board in its unique orientation; moves in that orientation.
    let position = |board: &Board, value: i8, level: u8, links: &[(i8, Move)], leaf: Option<(i8, Move)>| {
        let (u, t) = board.canonical();
        let code = |m: Move| match t.apply_move(m) {
            Move::Pass => 64u8,
            Move::Place(s) => s.index() as u8,
        };
        let mut out = Vec::new();
        out.extend_from_slice(&u.player.to_le_bytes());
        out.extend_from_slice(&u.opponent.to_le_bytes());
        for n in [1u32, 0, 0, 1] {
            out.extend_from_slice(&n.to_le_bytes());
        }
        for v in [value as i16, value as i16 - 2, value as i16 + 2] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.push(links.len() as u8);
        out.push(level);
        for &(s, m) in links {
            out.extend_from_slice(&[s as u8, code(m)]);
        }
        match leaf {
            Some((s, m)) => out.extend_from_slice(&[s as u8, code(m)]),
            None => out.extend_from_slice(&[(-127i8) as u8, 65]),
        }
        out
    };
    let mut file = b"XADEKOOB\x04\x04".to_vec();
    file.extend_from_slice(&[0xea, 0x07, 11, 23, 6, 0, 0, 0]);
    for v in [60i32, 20, 2, 1, 0, 3] {
        file.extend_from_slice(&v.to_le_bytes());
    }
    file.extend(position(&a, c_score, 60, &[(c_score, Move::Place(sq))], None));
    file.extend(position(&b, -c_score, 60, &[(-c_score, Move::Pass)], None));
    file.extend(position(&c, c_score, 60, &[], Some((c_score, Move::Place(c_best.1)))));

    let imported = interchange::import(&file).unwrap();
    assert_eq!((imported.format, imported.positions, imported.read), (BookFormat::EdaxBinary, 3, 3));
    let book = Book::open_verified(&imported.bytes[..]).unwrap();
    let (ha, hb, hc) = (book.probe(&a).unwrap(), book.probe(&b).unwrap(), book.probe(&c).unwrap());
    assert_eq!((ha.value(), hb.value(), hc.value()), (c_score as i32, -c_score as i32, c_score as i32));
    assert_eq!(ha.record.leaf_move, LeafMove::NONE, "A has no leaf: its move is in the book");
    assert_eq!(hb.record.leaf_move, LeafMove::NONE, "B's pass is in the book");
    assert_eq!(hc.leaf_move(), Some(Move::Place(c_best.1)), "C's leaf, mapped back to C's orientation");
    assert_eq!(hc.record.leaf_score, c_score);
    assert!(hc.record.leaf_exact() && hc.record.leaf_depth as u32 == c.empty_count(), "level 60 is exact");
    // The book line follows the pass.
    let line = thorbook::book::book_line(&book, &thorbook::Position { board: a, side: thorbook::Color::Black }, 10);
    assert_eq!(line, vec![Move::Place(sq), Move::Pass, Move::Place(c_best.1)]);

    // Damage: every cut inside the positions is a located truncation, never a shorter book.
    for cut in [41, 42, 60, file.len() - 1] {
        match interchange::import(&file[..cut]) {
            Err(InterchangeError::Truncated { at, .. }) => {
                if cut >= 42 {
                    assert!(matches!(at, Location::Record { .. } | Location::Header { byte: 38 }), "{at:?}")
                }
            }
            other => panic!("cut at {cut}: {other:?}"),
        }
    }
    // An illegal move code names the position and the byte.
    // d4 (code 27) is a centre square, occupied in every position.
    let mut bad = file.clone();
    let leaf_at = file.len() - 1;
    bad[leaf_at] = 27;
    let msg = interchange::import(&bad).expect_err("an occupied square is not a leaf move").to_string();
    assert!(msg.contains("position 2") && msg.contains(&format!("byte {leaf_at}")), "{msg}");
    // A position count that disagrees with the positions.
    let mut short = file.clone();
    short[38] = 4;
    let err = interchange::import(&short).unwrap_err();
    assert!(
        matches!(err, InterchangeError::Truncated { what: Shortfall::Positions { declared: 4, found: 3 }, .. }),
        "{err}"
    );
}

#[test]
fn foreign_and_damaged_files_are_located_errors() {
    let bytes = mixed_book();
    let book = Book::open_verified(&bytes[..]).unwrap();
    let eg = interchange::export(&book, ExportFormat::Egaroucid).unwrap().bytes;
    let err = interchange::import(&eg[..eg.len() - 7]).unwrap_err();
    assert!(matches!(err, InterchangeError::Truncated { what: Shortfall::Positions { .. }, .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("truncated") && msg.contains("position"), "{msg}");
    let mut v2 = eg.clone();
    v2[9] = 2;
    let err = interchange::import(&v2).unwrap_err();
    assert!(
        matches!(
            err,
            InterchangeError::Invalid {
                at: Location::Header { byte: 9 },
                what: ImportFault::Version { found: 2, .. },
                ..
            }
        ),
        "{err}"
    );
    let mut overlap = eg.clone();
    overlap[14 + 8..14 + 16].copy_from_slice(&eg[14..22]);
    let err = interchange::import(&overlap).unwrap_err();
    assert!(
        matches!(
            err,
            InterchangeError::Invalid {
                at: Location::Record { index: 0, byte: 14 },
                what: ImportFault::BothColours,
                ..
            }
        ),
        "{err}"
    );
    let msg = err.to_string();
    assert!(msg.contains("position 0 (byte 14)"), "{msg}");
    for foreign in [&b"PK\x03\x04 zip"[..], b"", b"hello world\n"] {
        assert!(matches!(interchange::import(foreign), Err(InterchangeError::Unrecognised { .. })));
    }
    // Through the binary: a non-zero exit naming the file.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("cut.egbk3");
    std::fs::write(&f, &eg[..100]).unwrap();
    let err = thorbook(&["book", "import", f.to_str().unwrap(), "-o", dir.path().join("o.tbk").to_str().unwrap()])
        .fails()
        .to_string();
    assert!(err.contains("cut.egbk3") && err.contains("truncated"), "{err}");
    assert!(!dir.path().join("o.tbk").exists(), "no book is written from a damaged file");
}

#[test]
fn edax_text_export_imports_with_values_backed_up() {
    let bytes = mixed_book();
    let book = Book::open_verified(&bytes[..]).unwrap();
    // Edax's text export: one line per position, its leaf only.
    let mut text = String::new();
    for (key, board) in walk(&book) {
        let r = book.get(key).unwrap();
        let squares: String = (0..64)
            .map(|i| {
                if board.player >> i & 1 == 1 {
                    'X'
                } else if board.opponent >> i & 1 == 1 {
                    'O'
                } else {
                    '-'
                }
            })
            .collect();
        let (mv, score) = match r.leaf() {
            Some(Move::Pass) => ("PS".to_string(), r.leaf_score as i32),
            Some(m) => (m.to_string().to_uppercase(), r.leaf_score as i32),
            None if board.is_game_over() => ("--".to_string(), r.leaf_score as i32),
            None => ("--".to_string(), -127),
        };
        let level = if r.leaf_exact() && r.leaf().is_some() { 60 } else { r.leaf_depth };
        text.push_str(&format!("{squares} X,{level},{mv},{score}\n"));
    }
    let imported = interchange::import(text.as_bytes()).unwrap();
    assert_eq!(imported.format, BookFormat::EdaxText);
    let again = Book::open_verified(&imported.bytes[..]).unwrap();
    for (a, b) in book.records().zip(again.records()) {
        assert_eq!(
            (a.key, a.value, a.leaf_move, a.leaf_score, a.leaf_depth),
            (b.key, b.value, b.leaf_move, b.leaf_score, b.leaf_depth)
        );
    }
}

/// Books of versions 1 and 2 (24-byte records) are read, verified and probed (their
/// records are one checksummed block), and `book import` rewrites them as version 3
/// with the same records.
#[test]
fn version_1_and_2_books_are_read_and_upgraded() {
    use crate::util::old_format_book;
    let bytes = mixed_book();
    let new = Book::open_verified(&bytes[..]).unwrap();
    assert_eq!(new.version(), 3);
    let records: Vec<Record> = new.records().collect();
    let v2 = old_format_book(&records, new.params(), 2);
    assert_eq!(v2.len(), 64 + 24 * records.len());
    let old2 = Book::open_verified(&v2[..]).unwrap();
    assert_eq!(old2.version(), 2);
    assert_eq!(old2.records().collect::<Vec<_>>(), records);
    for r in &records {
        assert_eq!(old2.get(r.key), Some(*r));
    }
    let upgraded = interchange::import(&v2).unwrap();
    assert_eq!(upgraded.format, BookFormat::Thorbook);
    assert!(upgraded.bytes == bytes, "a version 2 book imports as the version 3 book of its records");
    // Version 1: byte 23 reserved, one selectivity (1.5 σ) for the whole book in header
    // byte 39, which every searched leaf gets.
    let params = thorbook::book::BuildParams { selectivity_tenths: 15, ..new.params() };
    let v1 = old_format_book(&records, params, 1);
    let old = Book::open_verified(&v1[..]).unwrap();
    assert_eq!(old.version(), 1);
    for (a, b) in old.records().zip(new.records()) {
        let searched = b.leaf().is_some() && !b.leaf_exact();
        assert_eq!(a.leaf_selectivity, if searched { 15 } else { 0 });
        assert_eq!(Record { leaf_selectivity: 0, ..a }, Record { leaf_selectivity: 0, ..b });
    }
    let upgraded = interchange::import(&v1).unwrap();
    let up = Book::open_verified(&upgraded.bytes[..]).unwrap();
    assert_eq!(up.version(), 3);
    assert_eq!(up.records().collect::<Vec<_>>(), old.records().collect::<Vec<_>>());
    // A damaged old book: its one block fails, so a probe finds nothing and says why.
    let mut damaged = v2.clone();
    damaged[64 + 8] ^= 1;
    let book = Book::open(&damaged[..]).unwrap();
    assert_eq!(book.get(records[0].key), None);
    assert!(book.damage().unwrap().to_string().contains("record checksum mismatch"), "{:?}", book.damage());
    // A version 2 record that version 3 cannot hold is refused by record, not cut.
    let mut deep = records.clone();
    let i = deep.iter().position(|r| r.leaf().is_some()).unwrap();
    deep[i].leaf_depth = 64;
    let err = interchange::import(&old_format_book(&deep, new.params(), 2)).unwrap_err();
    assert!(
        matches!(
            &err,
            InterchangeError::Book(BookError::Field { index, what: FieldFault::LeafDepth { depth: 64 }, .. })
                if *index == i as u64
        ),
        "{err}"
    );
    let err = err.to_string();
    assert!(err.contains(&format!("record {i} ")) && err.contains("leaf depth 64"), "{err}");
}

/// Found by fuzzing: counts that a thorbook record cannot hold are refused, located,
/// instead of importing as a book that fails its own verification.
#[test]
fn game_counts_beyond_a_record_are_located_errors() {
    let bytes = mixed_book();
    let book = Book::open_verified(&bytes[..]).unwrap();
    let mut edax = interchange::export(&book, ExportFormat::Edax(Default::default())).unwrap().bytes;
    // The first position starts after the 42-byte header: wins at +16, losses at +24.
    edax[58..62].copy_from_slice(&u32::MAX.to_le_bytes());
    edax[66..70].copy_from_slice(&7u32.to_le_bytes());
    let err = interchange::import(&edax).unwrap_err();
    assert!(
        matches!(
            err,
            InterchangeError::Invalid {
                at: Location::Record { index: 0, byte: 58 },
                what: ImportFault::TooManyGames { wins: u32::MAX, losses: 7, .. },
                ..
            }
        ),
        "{err}"
    );

    let text = String::from_utf8(interchange::export(&book, ExportFormat::Text).unwrap().bytes).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut fields: Vec<String> = lines[2].split_whitespace().map(str::to_string).collect();
    fields[6] = "10".into(); // games
    fields[7] = "8".into(); // wins
    fields[8] = "3".into(); // draws
    lines[2] = fields.join(" ");
    let err = interchange::import(lines.join("\n").as_bytes()).unwrap_err();
    let counts = ImportFault::Counts { wins: 8, draws: 3, games: 10 };
    assert!(matches!(err, InterchangeError::Invalid { at: Location::Line(3), what, .. } if what == counts), "{err}");
}

/// Found by fuzzing: an Edax text line whose 64th byte falls inside a multi-byte
/// character panicked while splitting the board from the side to move.
#[test]
fn edax_text_boards_are_split_by_character() {
    let start = "---------------------------OX------XO--------------------------- X,18,F5,0\n";
    let line = format!("{}ڧ O,18,D6,-1\n", "-".repeat(63));
    let err = interchange::import(format!("{start}{line}").as_bytes()).unwrap_err();
    assert!(
        matches!(
            &err,
            InterchangeError::Invalid { at: Location::Line(2), what: ImportFault::Text { field: "board", .. }, .. }
        ),
        "{err}"
    );
    let err = err.to_string();
    assert!(err.contains("line 2") && err.contains("(`ڧ`) at square h8 is not X, O or -"), "{err}");
}
