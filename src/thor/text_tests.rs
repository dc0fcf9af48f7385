use super::*;

fn read_str(format: TextFormat, text: &str) -> TextFile {
    read("t", format, text.as_bytes())
}

#[test]
fn results_parse_in_every_spelling() {
    for (word, diff) in [("+12", 12), ("-4", -4), ("0", 0), ("38-26", 12), ("30-30", 0), ("B+6", 6), ("w+64", -64)] {
        assert_eq!(parse_result(word), Some(diff), "{word}");
    }
    // 33-30 with one empty: the empty goes to black.
    assert_eq!(parse_result("33-30"), Some(4));
    for bad in ["+65", "x", "40-40", "B+", "--"] {
        assert_eq!(parse_result(bad), None, "{bad}");
    }
    assert_eq!(ggf_result("+30.000"), Ok(Some(30)));
    assert_eq!(ggf_result("-64.000:t"), Ok(None));
    assert_eq!(ggf_result("?"), Ok(None));
    assert_eq!(ggf_result("+1.5"), Err(()));
}

#[test]
fn dates_give_years() {
    assert_eq!(ggf_year("2003.09.13_20:40:34.UTC"), Some(2003));
    assert_eq!(ggf_year("2014-02-21 20:52:27 GMT"), Some(2014));
    // 2003-05-27 13:24:23 UTC.
    assert_eq!(ggf_year("1054041863"), Some(2003));
    assert_eq!(ggf_year("946684800"), Some(2000));
    assert_eq!(ggf_year("946684799"), Some(1999));
    assert_eq!(ggf_year("soon"), None);
}

#[test]
fn transcripts_read_moves_passes_and_results() {
    let f = read_str(TextFormat::Transcript, "# comment\nf5d6c3\nF5 D6 C3 D3 +4\n\nf5 f5\nf5d6 x\n");
    assert_eq!(f.games.len(), 2);
    assert_eq!((f.games[0].record, f.games[0].result_known), (2, false));
    assert_eq!((f.games[1].record, f.games[1].raw.black_score, f.games[1].result_known), (3, 34, true));
    let kinds: Vec<_> = f.anomalies.iter().map(|a| (a.line, a.ply)).collect();
    assert_eq!(kinds, [(Some(5), Some(2)), (Some(6), None)]);
    assert!(matches!(f.anomalies[0].kind, AnomalyKind::Occupied { .. }));
}

/// Logistello's book lines (the first three of the published `logbook.gam`): the
/// signs give the colours, a repeated sign is the other side's pass, the result is
/// black's disc difference (here as WTHOR counts a finished game).
#[test]
fn logistello_lines_read_colours_passes_and_results() {
    let text = "\
+d3-c3+c4-e3+c2-b3+d2-e1+d1-c1+f4-d6+e6-g4+b2-f6+d7-c8+e7-d8+f3-f5+g5-h4+h6-f2+f7-h5+g6-c6+c5-c7+b6-b5+b4-e8+h3-g3+h2-e2+h7-g2+b1-a1+h1-a2+a3-g7+f8-h8+g8-a4+g1-f1+a6-a5+a7-a8+b8-b7: -04 10
+d3-c3+c4-e3+c2-b3+d2-e1+d1-c1+f4-d6+e6-g4+b2-f6+d7-c8+e7-d8+f3-f5+g5-h4+h6-f2+f7-h5+g6-c6+c5-c7+b6-b5+f8-a6+b4-a5+a4-e8+b8-h7+g8-b7+g2-g3+h2-a1+f1-e2+h3-a3+a8-a7+h8-g7+a2-b1-g1+h1: +00 10
# a comment
+d3-c3+c4-e3+c2-b3+d2-e1+d1-c1+f4-d6+e6-g4+b2-f6+d7-c8+e7-d8+f3-f5+g5-h4+h6-f2+f7-h5+g6-c6+c5-c7+b6-b5+f8-b4+a4-a6+e8-g8+b1-h7+e2-a5+a7-f1+a3-a1+h3-h2+a2-a8+g3-g2+b8-b7+h8-g7+h1+g1: +02 10
";
    let f = read_str(TextFormat::Logistello, text);
    assert!(f.anomalies.is_empty(), "{:?}", f.anomalies);
    let got: Vec<_> =
        f.games.iter().map(|g| (g.record, g.raw.black_score, g.replay.move_count, g.replay.passes)).collect();
    // Passes: white's b1 then g1 (black had none), black's h1 then g1.
    assert_eq!(got, [(1, 30, 60, 0), (2, 32, 60, 1), (4, 33, 60, 1)]);
    assert!(f.games.iter().all(|g| g.result_known && g.replay.outcome.is_finished()));
}

#[test]
fn damaged_logistello_lines_name_the_byte_and_the_ply() {
    let f = read_str(
        TextFormat::Logistello,
        "+d3-c3+z9: +00 10\n+d3-c3: x 10\n+d3+c3: +0\n+d3-c3+c4-e3: +65 10\n+d3-c3+c4\n",
    );
    // The last line, without a result, is a game whose result is unknown.
    assert_eq!(f.games.len(), 1);
    assert!(!f.games[0].result_known);
    let got: Vec<_> = f.anomalies.iter().map(|a| (a.line, a.offset, a.ply)).collect();
    assert_eq!(
        got,
        [(Some(1), Some(6), None), (Some(2), Some(26), None), (Some(3), Some(34), Some(2)), (Some(4), Some(56), None)]
    );
    assert!(matches!(f.anomalies[0].kind, AnomalyKind::Syntax { fault: TextFault::NotAMoveAt { ply: 3 } }));
    assert!(matches!(f.anomalies[1].kind, AnomalyKind::Syntax { fault: TextFault::Result }));
    assert!(matches!(f.anomalies[2].kind, AnomalyKind::WrongSide { expected: Color::White, found: Color::Black }));
    assert!(matches!(f.anomalies[3].kind, AnomalyKind::Syntax { fault: TextFault::Result }));
}

#[test]
fn a_pass_where_a_move_exists_is_named() {
    let f = read_str(TextFormat::Transcript, "f5 PA\n");
    assert_eq!(f.anomalies.len(), 1);
    assert_eq!(f.anomalies[0].ply, Some(2));
    assert!(matches!(f.anomalies[0].kind, AnomalyKind::PassWithMoves { color: Color::White }));
}

/// The reader's replay, made while it checks the moves, is the one WTHOR's replay
/// of the same move bytes gives: for every bundled game through GGF (colours
/// given, passes written) and transcripts (passes left out), and for passes
/// written where a transcript may write them.
#[test]
fn the_replay_made_while_reading_is_wthors() {
    use crate::thor::{bundled_sources, GameText, LoadOptions, ThorDatabase};
    let db = ThorDatabase::load(&bundled_sources(), LoadOptions::default()).unwrap();
    let with_passes = db.games.iter().filter(|g| g.replay.passes > 0).count();
    assert!(with_passes > 10, "{with_passes} games with a pass");
    for (text, format) in [(GameText::Ggf, TextFormat::Ggf), (GameText::Transcript, TextFormat::Transcript)] {
        let written: String = db.games.iter().map(|g| db.write_game(g, text) + "\n").collect();
        let f = read_str(format, &written);
        assert!(f.anomalies.is_empty(), "{:?}", f.anomalies.first());
        assert_eq!(f.games.len(), db.games.len());
        for (read, original) in f.games.iter().zip(&db.games) {
            assert_eq!(read.replay, original.replay, "{format:?} line {}", read.record);
            assert_eq!(super::super::replay::replay(&read.raw), Ok(read.replay));
        }
    }
    // A written pass, a trailing pass and a pass left out all give the same game.
    let with = db.games.iter().find(|g| g.replay.passes > 0).unwrap();
    let moves = crate::square::format_moves(&with.moves_with_passes());
    let f = read_str(TextFormat::Transcript, &format!("{moves}\n{}\n", with.transcript()));
    assert_eq!((f.games.len(), f.games[0].replay, f.games[1].replay), (2, with.replay, with.replay));
}

#[test]
fn control_characters_in_names_become_spaces() {
    let f = read_str(TextFormat::Jsonl, "{\"black\":\"a\\u0000b\\n\",\"white\":\"\\u0007\",\"moves\":\"f5\"}\n");
    assert_eq!(f.names, ["a b"]);
    assert_eq!((f.games[0].black, f.games[0].white), (Some(0), None));
}
