//! The NBoard protocol, version 2, so thorbook runs inside NBoard-compatible GUIs.
//!
//! From the GUI: `nboard 2`, `set depth N`, `set game GGF`, `set contempt N`,
//! `move MV[/EVAL[/TIME]]`, `hint N`, `go`, `ping N`, `learn`, `analyze`, `quit`. To the
//! GUI: `set myname`, `pong N`, `status TEXT`, `nodestats NODES SECONDS`,
//! `=== MV/EVAL/TIME`, `search PV EVAL 0 DEPTH` and `book PV EVAL GAMES DEPTH` (hints),
//! `analysis N EVAL`, `learned`. Moves are `F5` or `PA` (pass); evaluations are discs
//! for the side to move. The game's `TI` runs a clock for the engine's own moves (see
//! GGF's `TI[main//increment]`). A line that cannot be used is reported on the error stream and
//! the loop goes on (the protocol has no error reply).
// Input handling: every narrowing or sign-changing conversion is checked (`try_from`,
// `from_le_bytes`), never a silent `as`.
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_possible_wrap)]

use std::io::{BufRead, Write};

use super::clock::{Clock, TimeControl};
use super::game::{Game, GameError};
use super::ggf::{self, move_text, GgfGame};
use super::ponder::{self, Expectation, Interrupts, LineGeneration, PonderGate};
use super::{Engine, EngineError, MoveSource};
use crate::book::query::{book_moves, BookMove};
use crate::eval::IncrementalEvaluator;
use crate::search::Strength;
use crate::square::{format_moves, Move};

/// A parsed NBoard command.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Command {
    /// `nboard VERSION`
    NBoard(u32),
    /// `set depth N`
    SetDepth(u32),
    /// `set game GGF`
    SetGame(Box<GgfGame>),
    /// `set contempt N` (centidiscs)
    SetContempt(i32),
    /// `move MV[/EVAL[/TIME]]`
    Move(Move),
    /// `hint N`
    Hint(u32),
    /// `go`
    Go,
    /// `ping N`
    Ping(String),
    /// `learn`
    Learn,
    /// `analyze`
    Analyze,
    /// `quit`
    Quit,
}

/// Parses one line; `Ok(None)` for an empty line.
pub(crate) fn parse_line(line: &str) -> Result<Option<Command>, String> {
    let line = line.trim();
    let (word, rest) = line.split_once(char::is_whitespace).map_or((line, ""), |(w, r)| (w, r.trim()));
    let number = |what: &str, text: &str| -> Result<u32, String> {
        text.split_whitespace()
            .next()
            .ok_or_else(|| format!("{what}: missing number"))?
            .parse::<u32>()
            .map_err(|_| format!("{what}: `{text}` is not a whole number"))
    };
    Ok(Some(match word {
        "" => return Ok(None),
        "nboard" => Command::NBoard(number("nboard", rest)?),
        "set" => {
            let (what, value) = rest.split_once(char::is_whitespace).map_or((rest, ""), |(w, v)| (w, v.trim()));
            match what {
                "depth" => {
                    let d = number("set depth", value)?;
                    if !(1..=60).contains(&d) {
                        return Err(format!("set depth: {d} is not 1..60"));
                    }
                    Command::SetDepth(d)
                }
                "game" => Command::SetGame(Box::new(ggf::parse(value).map_err(|e| format!("set game: {e}"))?)),
                "contempt" => Command::SetContempt(
                    value.parse().map_err(|_| format!("set contempt: `{value}` is not a whole number"))?,
                ),
                other => return Err(format!("unknown setting `{other}`")),
            }
        }
        "move" => {
            let mv = rest.split('/').next().unwrap_or("").trim();
            Command::Move(mv.parse().map_err(|_| format!("move: `{mv}` is not a move"))?)
        }
        "hint" => {
            let n = number("hint", rest)?;
            if n == 0 {
                return Err("hint: the number of moves must be at least 1".into());
            }
            Command::Hint(n)
        }
        "go" => Command::Go,
        "ping" => Command::Ping(rest.to_string()),
        "learn" => Command::Learn,
        "analyze" => Command::Analyze,
        "quit" => Command::Quit,
        other => return Err(format!("unknown command `{other}`")),
    }))
}

/// An NBoard session: the game the GUI set, the engine.
pub struct NBoardSession<'e, E: IncrementalEvaluator> {
    engine: &'e mut Engine<E>,
    game: Game,
    /// The engine's clock under the game's `TI`, counting its own moves; `None`
    /// without a time control (the engine's own settings decide).
    clock: Option<Clock>,
    /// What to think about on the opponent's time, after a move under a clock.
    expectation: Option<Expectation>,
}

/// Why [`NBoardSession::handle`] refused a command (its message goes to the error
/// stream; the session goes on).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NBoardFailure {
    /// An `nboard` version other than 2.
    #[error("protocol version {0} is not supported (thorbook speaks 2)")]
    Version(u32),
    /// A game whose time control cannot be read: it is played without a clock.
    #[error("set game: the time control cannot be read; playing without a clock")]
    TimeControl,
    /// A move the game refuses.
    #[error("move {mv}: {error}")]
    Move {
        /// The move refused.
        mv: Move,
        /// Why.
        error: GameError,
    },
    /// `go` after the end of the game.
    #[error("go: the game is over")]
    GameOver,
    /// The engine could not choose a move.
    #[error("go: {0}")]
    Engine(EngineError),
}

impl<'e, E: IncrementalEvaluator> NBoardSession<'e, E> {
    /// A session on a new game from the start position.
    pub fn new(engine: &'e mut Engine<E>) -> NBoardSession<'e, E> {
        engine.new_game();
        NBoardSession { engine, game: Game::default(), clock: None, expectation: None }
    }

    /// The game so far.
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Handles one command, writing replies to `out`; `Err` is a refusal, its message
    /// for the error stream.
    pub fn handle(&mut self, command: Command, out: &mut impl Write) -> std::io::Result<Result<(), NBoardFailure>> {
        match command {
            Command::NBoard(2) => writeln!(out, "set myname thorbook")?,
            Command::NBoard(v) => return Ok(Err(NBoardFailure::Version(v))),
            Command::SetDepth(d) => self.engine.set_strength(Strength::for_depth(d)),
            Command::SetGame(g) => {
                let same_start = g.game.start() == self.game.start();
                let continues = same_start && g.game.moves().starts_with(&self.game.moves());
                let takes_back = same_start && self.game.moves().starts_with(&g.game.moves());
                // The engine's memory (table, book state) stays for the same game
                // going on or taken back, not for another game.
                if !(continues || takes_back) {
                    self.engine.new_game();
                }
                self.game = g.game;
                let control = match g.time.as_deref().map(TimeControl::parse_ggf).transpose() {
                    Ok(control) => control,
                    Err(_) => {
                        self.clock = None;
                        return Ok(Err(NBoardFailure::TimeControl));
                    }
                };
                // A new game or a new control restarts the clock; a game that goes on
                // keeps the time the engine has used.
                if !continues || self.clock.map(|c| c.control()) != control {
                    self.clock = control.map(Clock::new);
                }
            }
            // Accepted and ignored: the search scores a draw as 0 whatever the GUI asks.
            Command::SetContempt(_) => {}
            Command::Move(mv) => {
                if let Err(e) = self.game.play_inferring_pass(mv) {
                    return Ok(Err(NBoardFailure::Move { mv, error: e }));
                }
            }
            Command::Hint(n) => self.hint(n, out)?,
            Command::Go => return self.go(out),
            Command::Ping(n) => writeln!(out, "pong {n}")?,
            Command::Learn => writeln!(out, "learned")?,
            Command::Analyze => self.analyze(out)?,
            Command::Quit => {}
        }
        Ok(Ok(()))
    }

    fn go(&mut self, out: &mut impl Write) -> std::io::Result<Result<(), NBoardFailure>> {
        writeln!(out, "status thorbook is thinking")?;
        out.flush()?;
        let pos = self.game.position();
        let budget = self.clock.and_then(|c| c.budget(pos.board.empty_count()));
        let chosen = match self.engine.choose_with_time(&pos, budget) {
            Ok(m) => m,
            Err(EngineError::GameOver { .. }) => {
                writeln!(out, "status thorbook is waiting")?;
                return Ok(Err(NBoardFailure::GameOver));
            }
            Err(e) => return Ok(Err(NBoardFailure::Engine(e))),
        };
        if let Some(clock) = &mut self.clock {
            clock.spend(chosen.time);
            // The GUI echoes the move: pondering starts when the game stands after it.
            if let (true, Ok(after)) = (self.engine.config().ponder, pos.try_play(chosen.mv)) {
                self.expectation = Some(Expectation::new(after, &chosen.pv));
            }
        }
        if chosen.source == MoveSource::Book {
            writeln!(out, "status thorbook plays from its book")?;
        }
        let secs = chosen.time.as_secs_f64();
        writeln!(out, "nodestats {} {secs:.2}", chosen.nodes)?;
        writeln!(out, "=== {}/{:.2}/{secs:.1}", move_text(chosen.mv), chosen.score as f64)?;
        writeln!(out, "status thorbook is waiting")?;
        Ok(Ok(()))
    }

    fn hint(&mut self, n: u32, out: &mut impl Write) -> std::io::Result<()> {
        writeln!(out, "status thorbook is thinking")?;
        out.flush()?;
        let pos = self.game.position();
        if pos.board.is_game_over() {
            writeln!(out, "status thorbook is waiting")?;
            return Ok(());
        }
        // Book moves first (as book moves), then searched moves, `n` lines in all.
        // A book move's value rests on leaves searched to the book's build depth.
        let (book, leaf_depth): (Vec<BookMove>, u8) = match self.engine.book() {
            Some(b) => {
                let moves = book_moves(b, &pos).into_iter().filter(|m| m.in_book).take(n as usize).collect();
                (moves, b.params().depth)
            }
            None => (Vec::new(), 0),
        };
        for m in &book {
            writeln!(out, "book {} {:.2} {} {leaf_depth}", move_text(m.mv), m.score as f64, m.games)?;
        }
        if book.len() < n as usize {
            let r = self.engine.analyze(&pos, None).search;
            let depth = if r.exact { "100%".to_string() } else { r.depth.to_string() };
            let searched = r.moves.iter().filter(|m| !book.iter().any(|b| b.mv == m.mv));
            for m in searched.take(n as usize - book.len()) {
                let pv = if r.best_move() == Some(m.mv) { format_moves(&r.pv) } else { move_text(m.mv) };
                writeln!(out, "search {} {:.2} 0 {depth}", pv.to_ascii_uppercase(), m.score as f64)?;
            }
            writeln!(out, "nodestats {} {:.2}", r.nodes, r.elapsed.as_secs_f64())?;
        }
        writeln!(out, "status thorbook is waiting")?;
        Ok(())
    }

    /// Scores every position of the game, last first, for the side to move there.
    fn analyze(&mut self, out: &mut impl Write) -> std::io::Result<()> {
        writeln!(out, "status thorbook is analyzing")?;
        out.flush()?;
        let positions = self.game.positions();
        for (n, pos) in positions.iter().enumerate().rev() {
            let eval = if pos.board.is_game_over() {
                pos.board.final_score()
            } else {
                match self.engine.choose(pos) {
                    Ok(m) => m.score,
                    Err(_) => continue,
                }
            };
            writeln!(out, "analysis {n} {:.2}", eval as f64)?;
            out.flush()?;
        }
        writeln!(out, "status thorbook is waiting")?;
        Ok(())
    }
}

/// Whether a line the GUI sends while the engine thinks stops the search: a new `go`,
/// a new game, a `ping` (the GUI waits for its `pong`) or `quit`.
fn interrupts(line: &str) -> bool {
    matches!(parse_line(line), Ok(Some(Command::Go | Command::SetGame(_) | Command::Ping(_) | Command::Quit)))
}

/// Runs the NBoard loop until `quit` or the end of the input; unusable lines are
/// reported on `errors` and the loop goes on. The input is read on a thread of its own,
/// so that a `go`, `set game`, `ping` or `quit` stops a search in progress at once: the search
/// answers with what it has found and the line is then handled.
pub fn run<E: IncrementalEvaluator>(
    engine: &mut Engine<E>,
    input: impl BufRead + Send + 'static,
    mut output: impl Write,
    mut errors: impl Write,
) -> std::io::Result<()> {
    use std::sync::atomic::Ordering::SeqCst;
    let stop = engine.stop_handle().shared();
    let gate = PonderGate::new(stop.clone());
    // Lines are numbered from 1: a line stops only a search of an earlier line, never
    // its own.
    let generation = LineGeneration::new(stop.clone());
    let lines =
        ponder::read_on_thread(input, gate.clone(), Some(Interrupts { stops: interrupts, lines: generation.clone() }));
    let mut session = NBoardSession::new(engine);
    let mut queued = std::collections::VecDeque::new();
    let mut number = 0u64;
    loop {
        number += 1;
        let now = session.game.position();
        let Some(line) = ponder::next_line(session.engine, &mut session.expectation, &now, &gate, &lines, &mut queued)
        else {
            return Ok(());
        };
        let answer = |too_long: &_| writeln!(errors, "thorbook nboard: {too_long}").and_then(|()| errors.flush());
        let Some(line) = super::protocol_line(line, answer)? else { continue };
        let outcome = match parse_line(&line) {
            Ok(None) => continue,
            Ok(Some(Command::Quit)) => return Ok(()),
            Ok(Some(cmd)) => {
                // Say which line is handled, then look at what is queued: a line that
                // interrupts is either seen here or stops the search itself.
                generation.begin(number);
                queued.extend(lines.try_iter());
                if queued.iter().any(|l| l.as_ref().is_ok_and(|l| interrupts(l))) {
                    stop.store(true, SeqCst);
                }
                let outcome = session.handle(cmd, &mut output);
                generation.end();
                outcome?.map_err(|e| e.to_string())
            }
            Err(message) => Err(message),
        };
        if let Err(message) = outcome {
            writeln!(errors, "thorbook nboard: {message}")?;
            errors.flush()?;
        }
        output.flush()?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineConfig;
    use crate::search::Settings;
    use std::io::{BufRead, BufReader, Write};

    /// A line that interrupts arriving just as the line before it ends must not stop
    /// its own search: `ping` then `go`, pair after pair, each `go` sent right behind
    /// its `ping` while the loop is still answering it. Every `go` must be searched
    /// (with the reader's load-then-store of the stop flag, a `go` that began in
    /// between was answered by a move with no search, 0 nodes).
    #[test]
    fn a_line_never_stops_its_own_search_when_lines_race() {
        let search = Settings { depth: Some(3), hash_mib: 4, threads: 1, ..Settings::default() };
        let config = EngineConfig { search, book: crate::book::BookSource::None, ..EngineConfig::default() };
        let mut engine = Engine::new(config).unwrap();
        let (input, mut to_engine) = std::io::pipe().unwrap();
        let (from_engine, output) = std::io::pipe().unwrap();
        let session = std::thread::spawn(move || run(&mut engine, BufReader::new(input), output, std::io::sink()));
        let mut replies = BufReader::new(from_engine).lines();
        writeln!(to_engine, "nboard 2").unwrap();
        writeln!(to_engine, "set depth 3").unwrap();
        writeln!(to_engine, "set game (;GM[Othello]TY[8]BO[8 ---------------------------O*------*O--------------------------- *]B[F5];)").unwrap();
        let pairs = 200;
        for i in 0..pairs {
            // One write: the reader queues `ping` and `go` back to back.
            write!(to_engine, "ping {i}\ngo\n").unwrap();
            to_engine.flush().unwrap();
            let nodes = loop {
                let line = replies.next().expect("a reply").unwrap();
                if let Some(stats) = line.strip_prefix("nodestats ") {
                    break stats.split(' ').next().unwrap().parse::<u64>().unwrap();
                }
            };
            assert!(nodes > 0, "pair {i}: the go was answered without a search");
            // Wait for the move itself before the next pair.
            while !replies.next().expect("a move").unwrap().starts_with("===") {}
        }
        writeln!(to_engine, "quit").unwrap();
        session.join().unwrap().unwrap();
    }

    #[test]
    fn commands_parse() {
        assert_eq!(parse_line("nboard 2").unwrap(), Some(Command::NBoard(2)));
        assert_eq!(parse_line("set depth 12").unwrap(), Some(Command::SetDepth(12)));
        assert_eq!(parse_line("move F5/0.5/1.2").unwrap(), Some(Command::Move("f5".parse().unwrap())));
        assert_eq!(parse_line("move PA").unwrap(), Some(Command::Move(Move::Pass)));
        assert_eq!(parse_line("ping 7").unwrap(), Some(Command::Ping("7".into())));
        assert_eq!(parse_line("   ").unwrap(), None);
        assert!(parse_line("set depth 0").is_err());
        assert!(parse_line("set depth x").is_err());
        assert!(parse_line("hint 0").is_err());
        assert!(parse_line("move Z9").is_err());
        assert!(parse_line("set game (;GM[Othello]B[Z9];)").is_err());
        assert!(parse_line("fly").is_err());
    }
}
