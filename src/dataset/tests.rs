use crate::dataset::SelfPlayGames;
use crate::work::StopHandle;

use super::*;
use crate::position::Position;
use crate::testutil::{naive_flips, naive_moves, plain_alpha_beta, random_position, Rng};
use crate::thor::{bundled_sources, LoadOptions, ThorDatabase};

fn bundled_games() -> ThorDatabase {
    ThorDatabase::load(&bundled_sources(), LoadOptions::default()).expect("bundled archives load")
}

/// A plain replay of a game's transcript, square by square with the naive rules.
fn naive_rows(transcript: &str) -> Vec<(u64, u64, bool, u8)> {
    let mut rows = Vec::new();
    let (mut p, mut o, mut white) = (Board::START.player, Board::START.opponent, false);
    for chunk in transcript.as_bytes().chunks(2) {
        let sq: Square = std::str::from_utf8(chunk).unwrap().parse().unwrap();
        if naive_moves(p, o) == 0 {
            rows.push((p, o, white, PASS));
            (p, o, white) = (o, p, !white);
        }
        rows.push((p, o, white, sq.index() as u8));
        let f = naive_flips(p, o, sq);
        (p, o, white) = (o ^ f, p | sq.bit() | f, !white);
    }
    rows
}

#[test]
fn game_positions_match_a_naive_replay_of_every_bundled_game() {
    let db = bundled_games();
    let games = db.games();
    assert_eq!(games.len(), 6_139, "the bundled archives hold 2013–2015");
    let rows = GamePositions::of_games(games);
    let mut r = 0;
    for (i, g) in games.iter().enumerate() {
        let naive = naive_rows(&g.transcript());
        for (ply, &(p, o, white, mv)) in naive.iter().enumerate() {
            assert_eq!((rows.player[r], rows.opponent[r], rows.white_to_move[r]), (p, o, white), "game {i} ply {ply}");
            assert_eq!(rows.played[r], mv, "game {i} ply {ply}");
            assert_eq!(rows.legal[r], naive_moves(p, o));
            assert_eq!(u32::from(rows.empties[r]), 64 - (p | o).count_ones());
            assert_eq!((rows.ply[r] as usize, rows.game[r] as usize), (ply, i));
            let sign = if white { -1 } else { 1 };
            let black_final = 2 * i32::from(g.black_discs().unwrap()) - 64;
            assert_eq!(i32::from(rows.final_score[r]), sign * black_final);
            let theoretical = 2 * i32::from(g.theoretical_discs().unwrap()) - 64;
            assert_eq!(i32::from(rows.theoretical_score[r]), sign * theoretical);
            assert!(rows.final_known[r] && rows.theoretical_known[r]);
            r += 1;
        }
    }
    assert_eq!(r, rows.len(), "no rows beyond the games' moves and passes");
}

#[test]
fn planes_put_each_square_at_its_rank_and_file() {
    let pos = Position::from_moves("f5d6c3").unwrap();
    let (p, o, l) = (pos.board.player, pos.board.opponent, pos.board.legal_moves());
    let planes = planes(&[p, 0], &[o, 0], Some(&[l, 0]));
    assert_eq!(planes.len(), 2 * 3 * 64);
    for (plane, mask) in [p, o, l].into_iter().enumerate() {
        for rank in 0..8 {
            for file in 0..8 {
                let bit = (mask >> (rank * 8 + file)) & 1;
                assert_eq!(u64::from(planes[plane * 64 + rank * 8 + file]), bit);
            }
        }
    }
    assert!(planes[3 * 64..].iter().all(|&c| c == 0));
}

#[test]
fn random_games_are_legal_games_and_batches_concatenate() {
    let all = random_games(42, 0, 300, Some(BoardEncoding::BlackWhite), true);
    let mine = random_games(42, 0, 300, Some(BoardEncoding::MineTheirs), false);
    assert_eq!(all.tokens, mine.tokens);
    for g in 0..300 {
        let tokens = &all.tokens[g * 60..][..60];
        let len = usize::from(all.lengths[g]);
        assert!(tokens[len..].iter().all(|&t| t == PADDING));
        let mut pos = Position::START;
        for (t, &tok) in tokens[..len].iter().enumerate() {
            let sq = Square::try_new(tok).expect("a square");
            // A side without a move passes: the other plays again.
            if pos.board.legal_moves() == 0 {
                pos = pos.pass();
            }
            pos = pos.try_play(Move::Place(sq)).expect("a legal move");
            if pos.board.legal_moves() == 0 && !pos.board.is_game_over() {
                pos = pos.pass();
            }
            let row = &all.boards[(g * 60 + t) * 64..][..64];
            let mine_row = &mine.boards[(g * 60 + t) * 64..][..64];
            for i in 0..64 {
                let bit = 1u64 << i;
                let want = u8::from(pos.black() & bit != 0) | u8::from(pos.white() & bit != 0) << 1;
                assert_eq!(row[i], want, "game {g} token {t} square {i}");
                let want_mine = u8::from(pos.board.player & bit != 0) | u8::from(pos.board.opponent & bit != 0) << 1;
                assert_eq!(mine_row[i], want_mine);
            }
            assert_eq!(all.legal[g * 60 + t], pos.board.legal_moves());
        }
        assert!(pos.board.is_game_over(), "game {g} ends only when neither side can move");
        let black = pos.black().count_ones() as i32;
        let white = pos.white().count_ones() as i32;
        let empties = 64 - black - white;
        let diff = black - white
            + if black > white {
                empties
            } else if white > black {
                -empties
            } else {
                0
            };
        assert_eq!(i32::from(all.final_score[g]), diff);
        assert!(all.legal[g * 60 + len..][..60 - len].iter().all(|&l| l == 0));
    }
    let (a, b) = (random_games(42, 0, 123, None, false), random_games(42, 123, 177, None, false));
    assert_eq!([a.tokens, b.tokens].concat(), all.tokens);
    assert!(a.boards.is_empty() && a.legal.is_empty());
    assert_ne!(random_games(43, 0, 300, None, false).tokens, all.tokens);
}

#[test]
fn random_first_moves_are_uniform() {
    let games = random_games(7, 0, 40_000, None, false);
    let mut counts = std::collections::HashMap::new();
    for g in 0..40_000 {
        *counts.entry(games.tokens[g * 60]).or_insert(0u32) += 1;
    }
    let mut squares: Vec<u8> = counts.keys().copied().collect();
    squares.sort_unstable();
    assert_eq!(squares, [19, 26, 37, 44], "d3 c4 f5 e6");
    // 10,000 expected each; the standard deviation is 87, so ±500 is over 5 of them.
    assert!(counts.values().all(|&c| (9_500..=10_500).contains(&c)), "{counts:?}");
}

#[test]
fn exact_scores_match_plain_alpha_beta() {
    let mut rng = Rng(0xDA7A);
    let mut boards: Vec<Board> = (0..150).map(|i| random_position(&mut rng, 4 + i % 7)).collect();
    // A finished game (the side to move wiped out, 6 empties): its final score, 0–64.
    boards.push(Board { player: 0, opponent: (1 << 58) - 1 });
    let stop = StopHandle::new();
    let scores = exact_scores(&boards, 8, &stop, &|_| {}).unwrap();
    assert_eq!(scores.last(), Some(&Some(-64)));
    for (board, score) in boards.iter().zip(&scores) {
        if board.empty_count() > 8 {
            assert_eq!(*score, None);
        } else {
            assert_eq!(i32::from(score.expect("solved")), plain_alpha_beta(board, -64, 64), "{board:?}");
        }
    }
    stop.stop();
    assert!(matches!(exact_scores(&boards, 8, &stop, &|_| {}), Err(LabelError::Interrupted)));
}

#[test]
fn search_scores_do_not_depend_on_threads_or_order() {
    let mut rng = Rng(0x5EA6);
    let boards: Vec<Board> = (0..96).map(|_| random_position(&mut rng, 30)).collect();
    let stop = StopHandle::new();
    let level = Level::new(4).unwrap();
    let pooled = search_scores(&boards, level, &stop, &|_| {}).unwrap();
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let reversed: Vec<Board> = boards.iter().rev().copied().collect();
    let mut alone = one.install(|| search_scores(&reversed, level, &stop, &|_| {})).unwrap();
    alone.reverse();
    assert_eq!(pooled, alone);
    assert!(pooled.iter().any(|&s| s != pooled[0]), "the scores are the positions', not a constant");
}

#[test]
fn book_labels_are_the_book_values_with_the_trust_queries_show() {
    let book = crate::book::bundled().unwrap();
    let pos = Position::from_moves("f5d6").unwrap();
    let moves = crate::book::book_moves(&book, &pos);
    let children: Vec<Board> = moves.iter().filter(|m| m.in_book).map(|m| pos.try_play(m.mv).unwrap().board).collect();
    assert!(children.len() > 2);
    // Two discs in the corners: no game reaches it.
    let off_book = Board::new(1, 1 << 63).unwrap();
    let labels = book_labels(&book, &[children.clone(), vec![off_book]].concat());
    for (m, label) in moves.iter().filter(|m| m.in_book).zip(&labels) {
        let label = label.as_ref().expect("a book child has a label");
        assert_eq!(label.value, -m.score, "{}", m.mv);
        assert_eq!(label.trust, m.trust, "{}", m.mv);
    }
    assert_eq!(labels[children.len()], None);
}

#[test]
fn self_play_games_are_legal_reproducible_and_start_with_the_random_plies() {
    let stop = StopHandle::new();
    let level = Level::new(2).unwrap();
    let spec = |first, count, random_plies, boards| with!(SelfPlayGames::default(), seed: 9, first: first, count: count, level: level, random_plies: random_plies, boards: boards);
    let games = self_play_games(&spec(40, 24, 6, Some(BoardEncoding::BlackWhite)), &stop, &|_| {}).unwrap();
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let alone = one.install(|| self_play_games(&spec(40, 24, 6, None), &stop, &|_| {})).unwrap();
    assert_eq!(games.tokens, alone.tokens, "the same games on one thread as on the pool");
    let random = random_games(9, 40, 24, None, false);
    for g in 0..24 {
        let tokens = &games.tokens[g * 60..][..60];
        assert_eq!(tokens[..6], random.tokens[g * 60..][..6], "game {g}: the random plies are the stream's");
        let mut pos = Position::START;
        for &tok in &tokens[..usize::from(games.lengths[g])] {
            if pos.board.legal_moves() == 0 {
                pos = pos.pass();
            }
            pos = pos.try_play(Move::Place(Square::new(tok))).expect("legal");
        }
        assert!(pos.board.is_game_over());
    }
    assert_ne!(games.tokens, random.tokens, "searched moves are not the random stream's");
    stop.stop();
    assert!(matches!(self_play_games(&spec(0, 4, 0, None), &stop, &|_| {}), Err(LabelError::Interrupted)));
}
