//! A game against the engine as text: the board with coordinates and the legal moves
//! marked, the person's moves typed as squares, undo, hints with the engine's score
//! for every move, a level that can change mid-game, and the final score. Reads any
//! line source, so it works at a terminal and from a script alike. Under a clock the
//! engine thinks while the person does (unless its configuration says not to), as in
//! the protocol loops: the input is read on a thread of its own, and a typed line
//! stops the ponder search.

use std::collections::VecDeque;
use std::io::{BufRead, Write};

use super::clock::{Clock, TimeControl};
use super::game::Game;
use super::ponder::{self, Expectation, PonderGate};
use super::{Engine, MoveSource};
use crate::board::Color;
use crate::eval::IncrementalEvaluator;
use crate::position::Position;
use crate::search::{Level, Strength};
use crate::square::{format_moves, Move};

const HELP: &str = "commands: a square (e.g. d3) to play it, `pass` when you have no move, `undo` \
(takes back your last move and the reply), `hint` (the engine's score for each of your moves), \
`level N` (1..14), `board`, `new`, `help`, `quit`";

/// The board as the player sees it: coordinates, discs, legal moves, the last move,
/// counts and the side to move.
pub(crate) fn render(pos: &Position, last: Option<Move>) -> String {
    let mut s = pos.diagram();
    let (b, w) = (pos.black().count_ones(), pos.white().count_ones());
    s.push_str(&format!("black (X) {b}  white (O) {w}"));
    if let Some(mv) = last {
        s.push_str(&format!("  last move {mv}"));
    }
    s.push('\n');
    s
}

fn final_line(game: &Game) -> String {
    let pos = game.position();
    let (b, w) = (pos.black().count_ones(), pos.white().count_ones());
    let score = game.black_score();
    let verdict = match score {
        0 => "a draw".to_string(),
        s if s > 0 => format!("black wins by {s}"),
        s => format!("white wins by {}", -s),
    };
    format!(
        "game over: black {b}, white {w} on the board; {verdict} ({}), moves {}",
        game.result_text(),
        format_moves(&game.moves())
    )
}

/// Plays a game: the person has `human`, the engine the other colour, on a game
/// clock under `control` when given (the engine's own moves count against it; see
/// [`Engine`] for how it uses it; the engine ponders on the person's time unless
/// [`super::EngineConfig::ponder`] is off). Returns the finished (or abandoned) game.
pub fn run<E: IncrementalEvaluator>(
    engine: &mut Engine<E>,
    human: Color,
    control: Option<TimeControl>,
    input: impl BufRead + Send + 'static,
    mut out: impl Write,
) -> std::io::Result<Game> {
    engine.new_game();
    let mut clock = control.map(Clock::new);
    let mut game = Game::default();
    let gate = PonderGate::new(engine.stop_handle().shared());
    let lines = ponder::read_on_thread(input, gate.clone(), None);
    let mut queue = VecDeque::new();
    let mut expectation: Option<Expectation> = None;
    writeln!(out, "You play {human}; thorbook plays {}. {HELP}", !human)?;
    let mut last: Option<Move> = None;
    let mut show = true;
    loop {
        let pos = game.position();
        if pos.board.is_game_over() {
            write!(out, "{}", render(&pos, last))?;
            writeln!(out, "{}", final_line(&game))?;
            return Ok(game);
        }
        if pos.side != human {
            let budget = clock.and_then(|c| c.budget(pos.board.empty_count()));
            let m = match engine.choose_with_time(&pos, budget) {
                Ok(m) => m,
                Err(e) => {
                    writeln!(out, "engine error: {e}")?;
                    return Ok(game);
                }
            };
            game.play(m.mv).expect("the engine plays legal moves");
            last = Some(m.mv);
            if clock.is_some() && engine.config().ponder {
                expectation = Some(Expectation::new(game.position(), &m.pv));
            }
            let how = match m.source {
                MoveSource::Book => "book".to_string(),
                MoveSource::Forced => "forced".to_string(),
                MoveSource::Search if m.exact => format!("exact, {} nodes", m.nodes),
                MoveSource::Search => format!("depth {}, {} nodes", m.depth, m.nodes),
            };
            let left = match clock.as_mut() {
                Some(c) => {
                    c.spend(m.time);
                    format!(", {:.1} s left", c.left().as_secs_f64())
                }
                None => String::new(),
            };
            writeln!(out, "thorbook plays {} ({how}, score {:+}, {:.2} s{left})", m.mv, m.score, m.time.as_secs_f64())?;
            show = true;
            continue;
        }
        if pos.board.must_pass() {
            writeln!(out, "{human} has no legal move and passes")?;
            game.play(Move::Pass).expect("a forced pass is legal");
            last = Some(Move::Pass);
            continue;
        }
        if show {
            write!(out, "{}", render(&pos, last))?;
            show = false;
        }
        write!(out, "your move ({human}): ")?;
        out.flush()?;
        let Some(line) = ponder::next_line(engine, &mut expectation, &pos, &gate, &lines, &mut queue) else {
            writeln!(out, "\nend of input: the game is left unfinished")?;
            return Ok(game);
        };
        let Some(line) = super::protocol_line(line, |too_long| writeln!(out, "{too_long}"))? else { continue };
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            [] => {}
            ["quit" | "exit"] => return Ok(game),
            ["help" | "?"] => writeln!(out, "{HELP}")?,
            ["board"] => show = true,
            ["new"] => {
                engine.new_game();
                clock = control.map(Clock::new);
                game = Game::default();
                last = None;
                show = true;
            }
            ["undo"] => {
                // Back to the person's previous turn: the engine's reply and the move.
                let mut undone = 0;
                while let Some(_mv) = game.undo() {
                    undone += 1;
                    if game.position().side == human && !game.position().board.must_pass() {
                        break;
                    }
                }
                last = None;
                show = true;
                if undone == 0 {
                    writeln!(out, "nothing to undo")?;
                }
            }
            ["hint"] => {
                let a = engine.analyze(&pos, None);
                writeln!(out, "{}", hint_text(&a))?;
            }
            ["level", n] => match n.parse::<u8>().ok().and_then(|n| Level::new(n).ok()) {
                Some(level) => {
                    engine.set_strength(Strength::level(level));
                    writeln!(
                        out,
                        "level {level}: depth {}, exact from {} empties",
                        level.spec().depth,
                        level.spec().exact_at
                    )?;
                }
                None => writeln!(out, "level must be 1..{}", Level::MAX)?,
            },
            [word] => match word.parse::<Move>() {
                Ok(mv) => match game.play(mv) {
                    Ok(()) => {
                        last = Some(mv);
                        show = true;
                    }
                    Err(e) => writeln!(out, "{e}; legal: {}", legal_list(&pos))?,
                },
                Err(_) => writeln!(out, "`{word}` is not a move or a command; {HELP}")?,
            },
            _ => writeln!(out, "`{line}` is not a move or a command; {HELP}")?,
        }
    }
}

fn legal_list(pos: &Position) -> String {
    pos.legal_squares().iter().map(|s| s.to_string()).collect::<Vec<_>>().join(" ")
}

fn hint_text(a: &super::Analysis) -> String {
    let mut s = String::new();
    for m in &a.book {
        let what = if m.in_book {
            format!("book, {} games", m.games)
        } else {
            format!("book leaf, depth {}", m.depth.unwrap_or(m.trust.leaf_depth))
        };
        s.push_str(&format!("  {:<4} {:>+4}  {what}\n", m.mv.to_string(), m.score));
    }
    // The book's values rest on its leaves' searches; the search's on its own depth
    // from here: the two may rank moves differently, and each list says which it is.
    if !a.book.is_empty() {
        s.insert_str(0, "  from the book (values backed up from its leaf searches):\n");
    }
    let r = &a.search;
    let kind = if r.exact { "exact".to_string() } else { format!("depth {}", r.depth) };
    s.push_str(&format!("  from a search of this position ({kind}):\n"));
    for m in &r.moves {
        s.push_str(&format!("  {:<4} {:>+4}  search, {kind}\n", m.mv.to_string(), m.score));
    }
    s.push_str(&format!("  best line: {}", format_moves(&a.pv)));
    s
}

#[cfg(test)]
mod tests {
    use std::io::{BufReader, Write as _};
    use std::time::Duration;

    use super::*;
    use crate::book::BookSource;
    use crate::engine::EngineConfig;
    use crate::search::Settings;

    fn engine(ponder: bool) -> Engine {
        let search = Settings { hash_mib: 8, threads: 1, level: Level::new(4).ok(), ..Settings::default() };
        Engine::new(EngineConfig { search, book: BookSource::None, ponder, ..EngineConfig::default() }).unwrap()
    }

    /// Plays f5 as black under a one-minute clock, waits while the engine may ponder,
    /// then quits; returns the game and the board the engine pondered, if any.
    fn play_f5_then_wait(ponder: bool) -> (Game, Option<crate::board::Board>) {
        let mut engine = engine(ponder);
        let (reader, mut writer) = std::io::pipe().unwrap();
        let (mut shown, out) = std::io::pipe().unwrap();
        let control = Some(TimeControl::main_only(Duration::from_secs(60)));
        let game = std::thread::scope(|s| {
            let session = s.spawn(|| run(&mut engine, Color::Black, control, BufReader::new(reader), out));
            writeln!(writer, "f5").unwrap();
            // The second prompt follows the engine's reply; from then on it thinks on
            // the person's time until the next line.
            let mut text = Vec::new();
            let mut chunk = [0u8; 4096];
            while String::from_utf8_lossy(&text).matches("your move").count() < 2 {
                let n = std::io::Read::read(&mut shown, &mut chunk).unwrap();
                assert!(n > 0, "the session ended early: {}", String::from_utf8_lossy(&text));
                text.extend_from_slice(&chunk[..n]);
            }
            std::thread::sleep(Duration::from_millis(200));
            writeln!(writer, "quit").unwrap();
            let game = session.join().unwrap().unwrap();
            drop(shown);
            game
        });
        (game, engine.pondered.as_ref().map(|p| p.board))
    }

    #[test]
    fn under_a_clock_the_engine_ponders_while_the_person_thinks_and_a_line_stops_it() {
        let (game, pondered) = play_f5_then_wait(true);
        assert_eq!(game.moves().len(), 2, "f5 and the engine's reply; quit ended the game at once");
        let pondered = pondered.expect("the engine pondered while waiting for the person");
        // The position after the person's expected reply: f5, the engine's move, one more.
        assert_eq!(pondered.empty_count(), 57);
        let (game, pondered) = play_f5_then_wait(false);
        assert_eq!((game.moves().len(), pondered), (2, None), "no pondering when it is turned off");
    }
}
