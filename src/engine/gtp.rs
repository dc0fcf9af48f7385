//! GTP (Go Text Protocol, version 2) with the Othello conventions GRhino and other
//! Othello GTP engines use: squares `A1`..`H8`, colours `b`/`w`, `pass`, results
//! `B+N`/`W+N`/`0` with empty squares to the winner.
//!
//! A line parses into a `Request` (optional numeric id and a [`Command`]); a
//! [`GtpSession`] answers it from its game, clocks and engine; [`run`] is the loop over
//! any reader and writer. A bad line is answered `? message` and the loop goes on.
// Input handling: every narrowing or sign-changing conversion is checked (`try_from`,
// `from_le_bytes`), never a silent `as`.
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_possible_wrap)]

use std::collections::VecDeque;
use std::io::{BufRead, Write};
use std::time::{Duration, Instant};

use super::clock::{Clock, TimeControl};
use super::game::{Game, GameError};
use super::ponder::{self, Expectation, PonderGate};
use super::{Engine, EngineError};
use crate::board::Color;
use crate::eval::IncrementalEvaluator;
use crate::position::Position;
use crate::square::Move;

/// The commands thorbook answers, as `list_commands` prints them.
pub(crate) const COMMANDS: &[&str] = &[
    "protocol_version",
    "name",
    "version",
    "known_command",
    "list_commands",
    "boardsize",
    "clear_board",
    "komi",
    "play",
    "genmove",
    "undo",
    "final_score",
    "showboard",
    "time_settings",
    "time_left",
    "quit",
];

/// A parsed GTP command.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Command {
    /// `protocol_version`
    ProtocolVersion,
    /// `name`
    Name,
    /// `version`
    Version,
    /// `known_command NAME`
    KnownCommand(String),
    /// `list_commands`
    ListCommands,
    /// `boardsize N` (only 8 is accepted when handled)
    BoardSize(u32),
    /// `clear_board`
    ClearBoard,
    /// `komi K` (accepted, meaningless in Othello)
    Komi,
    /// `play COLOR MOVE`
    Play(Color, Move),
    /// `genmove COLOR`
    Genmove(Color),
    /// `undo`
    Undo,
    /// `final_score`
    FinalScore,
    /// `showboard`
    ShowBoard,
    /// `time_settings MAIN BYO_YOMI STONES`
    TimeSettings(TimeControl),
    /// `time_left COLOR TIME STONES`
    TimeLeft(Color, Duration, u32),
    /// `quit`
    Quit,
}

/// One line: an optional id and a command.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Request {
    /// The numeric id, echoed in the response.
    pub id: Option<u64>,
    /// The command.
    pub command: Command,
}

/// A line that is not a valid command; the id (if one parsed) is echoed in the error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BadLine {
    /// The id, if the line started with one.
    pub id: Option<u64>,
    /// What is wrong.
    pub message: String,
}

fn parse_color(word: Option<&str>) -> Result<Color, String> {
    match word.map(str::to_ascii_lowercase).as_deref() {
        Some("b" | "black") => Ok(Color::Black),
        Some("w" | "white") => Ok(Color::White),
        Some(w) => Err(format!("invalid color `{w}` (expected b, w, black or white)")),
        None => Err("missing color".into()),
    }
}

/// Seconds as GTP gives them: non-negative, at most a year.
fn parse_seconds(word: Option<&str>, what: &str) -> Result<Duration, String> {
    let w = word.ok_or_else(|| format!("missing {what}"))?;
    let secs: f64 = w.parse().map_err(|_| format!("{what} `{w}` is not a number"))?;
    crate::search::settings::seconds(secs, true).map_err(|e| format!("{what} {e}"))
}

fn parse_count(word: Option<&str>, what: &str) -> Result<u32, String> {
    let w = word.ok_or_else(|| format!("missing {what}"))?;
    w.parse().map_err(|_| format!("{what} `{w}` is not a whole number"))
}

/// Parses one input line; `Ok(None)` for an empty line or a comment.
pub(crate) fn parse_line(line: &str) -> Result<Option<Request>, BadLine> {
    // GTP preprocessing: drop control characters, tabs are spaces, `#` starts a comment.
    let cleaned: String = line
        .split('#')
        .next()
        .unwrap_or("")
        .chars()
        .map(|c| if c == '\t' { ' ' } else { c })
        .filter(|c| !c.is_control())
        .collect();
    let mut words = cleaned.split_whitespace().peekable();
    let Some(first) = words.peek().copied() else { return Ok(None) };
    let id = if first.bytes().all(|b| b.is_ascii_digit()) {
        words.next();
        Some(first.parse::<u64>().map_err(|_| BadLine { id: None, message: format!("id `{first}` is too large") })?)
    } else {
        None
    };
    let bad = |message: String| BadLine { id, message };
    let Some(name) = words.next() else { return Err(bad("missing command".into())) };
    let command = match name {
        "protocol_version" => Command::ProtocolVersion,
        "name" => Command::Name,
        "version" => Command::Version,
        "known_command" => Command::KnownCommand(words.next().unwrap_or("").to_string()),
        "list_commands" => Command::ListCommands,
        "boardsize" => Command::BoardSize(parse_count(words.next(), "board size").map_err(bad)?),
        "clear_board" => Command::ClearBoard,
        "komi" => {
            let k = words.next().ok_or_else(|| bad("missing komi".into()))?;
            k.parse::<f64>().map_err(|_| bad(format!("komi `{k}` is not a number")))?;
            Command::Komi
        }
        "play" => {
            let color = parse_color(words.next()).map_err(bad)?;
            let mv = words.next().ok_or_else(|| bad("missing move".into()))?;
            let mv: Move = mv.parse().map_err(|_| bad(format!("invalid move `{mv}` (expected A1..H8 or pass)")))?;
            Command::Play(color, mv)
        }
        "genmove" => Command::Genmove(parse_color(words.next()).map_err(bad)?),
        "undo" => Command::Undo,
        "final_score" => Command::FinalScore,
        "showboard" => Command::ShowBoard,
        "time_settings" => {
            let main = parse_seconds(words.next(), "main time").map_err(bad)?;
            let byo_yomi = parse_seconds(words.next(), "byo-yomi time").map_err(bad)?;
            let stones = parse_count(words.next(), "byo-yomi stones").map_err(bad)?;
            Command::TimeSettings(TimeControl { main, byo_yomi, stones, increment: Duration::ZERO })
        }
        "time_left" => {
            let color = parse_color(words.next()).map_err(bad)?;
            let left = parse_seconds(words.next(), "time left").map_err(bad)?;
            let stones = parse_count(words.next(), "stones").map_err(bad)?;
            Command::TimeLeft(color, left, stones)
        }
        "quit" => Command::Quit,
        other => return Err(bad(format!("unknown command `{other}`"))),
    };
    Ok(Some(Request { id, command }))
}

/// A GTP game against an engine: the game record, the clocks, the engine.
pub struct GtpSession<'e, E: IncrementalEvaluator> {
    engine: &'e mut Engine<E>,
    game: Game,
    control: Option<TimeControl>,
    clocks: [Option<Clock>; 2],
    /// What to think about on the opponent's time, after a move under a clock.
    expectation: Option<Expectation>,
}

fn color_index(c: Color) -> usize {
    match c {
        Color::Black => 0,
        Color::White => 1,
    }
}

/// Why [`GtpSession::handle`] refused a command: the `?` reply, its text the message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GtpFailure {
    /// `boardsize` other than 8.
    #[error("unacceptable size")]
    UnacceptableSize,
    /// A move played after the end of the game.
    #[error("the game is over: {mv} cannot be played")]
    GameOver {
        /// The move refused.
        mv: Move,
    },
    /// A move the rules refuse.
    #[error("illegal move: {0}")]
    IllegalMove(GameError),
    /// `undo` at the start of the game.
    #[error("cannot undo")]
    CannotUndo,
    /// `final_score` before the end.
    #[error("the game is not over")]
    GameNotOver,
    /// `genmove` for a side that cannot be to move.
    #[error("{0}")]
    NotToMove(GameError),
    /// The engine could not choose a move.
    #[error("{0}")]
    Engine(EngineError),
    /// The engine chose a move the game refuses (a bug).
    #[error("internal error: the engine chose {0}")]
    EngineChoseIllegal(GameError),
}

impl<'e, E: IncrementalEvaluator> GtpSession<'e, E> {
    /// A session on a new game from the start position.
    pub fn new(engine: &'e mut Engine<E>) -> GtpSession<'e, E> {
        engine.new_game();
        GtpSession { engine, game: Game::default(), control: None, clocks: [None, None], expectation: None }
    }

    /// The game so far.
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Answers one command: `Ok(text)` for `=`, `Err(failure)` for `?` and its message.
    pub fn handle(&mut self, command: &Command) -> Result<String, GtpFailure> {
        match command {
            Command::ProtocolVersion => Ok("2".into()),
            Command::Name => Ok("thorbook".into()),
            Command::Version => Ok(env!("CARGO_PKG_VERSION").into()),
            Command::KnownCommand(name) => Ok(COMMANDS.contains(&name.as_str()).to_string()),
            Command::ListCommands => Ok(COMMANDS.join("\n")),
            Command::BoardSize(8) => Ok(String::new()),
            Command::BoardSize(_) => Err(GtpFailure::UnacceptableSize),
            Command::ClearBoard => {
                self.game = Game::default();
                self.engine.new_game();
                self.clocks = [self.control.map(Clock::new), self.control.map(Clock::new)];
                Ok(String::new())
            }
            Command::Komi => Ok(String::new()),
            Command::Play(color, mv) => {
                if self.game.is_over() {
                    return Err(GtpFailure::GameOver { mv: *mv });
                }
                self.game.play_for(*color, *mv).map_err(GtpFailure::IllegalMove)?;
                Ok(String::new())
            }
            Command::Genmove(color) => self.genmove(*color),
            Command::Undo => match self.game.undo() {
                Some(_) => Ok(String::new()),
                None => Err(GtpFailure::CannotUndo),
            },
            Command::FinalScore => {
                if self.game.is_over() {
                    Ok(self.game.result_text())
                } else {
                    Err(GtpFailure::GameNotOver)
                }
            }
            Command::ShowBoard => Ok(showboard(&self.game.position())),
            Command::TimeSettings(control) => {
                self.control = Some(*control);
                self.clocks = [Some(Clock::new(*control)), Some(Clock::new(*control))];
                Ok(String::new())
            }
            Command::TimeLeft(color, left, stones) => {
                let control = self.control.unwrap_or(TimeControl::main_only(*left));
                let clock = self.clocks[color_index(*color)].get_or_insert_with(|| Clock::new(control));
                clock.set_left(*left, *stones);
                Ok(String::new())
            }
            Command::Quit => Ok(String::new()),
        }
    }

    fn genmove(&mut self, color: Color) -> Result<String, GtpFailure> {
        if self.game.is_over() {
            return Ok("pass".into());
        }
        let to_move = self.game.position_for(color).map_err(GtpFailure::NotToMove)?;
        let start = Instant::now();
        let budget = self.clocks[color_index(color)].and_then(|c| c.budget(to_move.board.empty_count()));
        let chosen = match self.engine.choose_with_time(&to_move, budget) {
            Ok(m) => m,
            Err(EngineError::GameOver { .. }) => return Ok("pass".into()),
            Err(e) => return Err(GtpFailure::Engine(e)),
        };
        let under_clock = self.clocks[color_index(color)].as_mut().map(|clock| clock.spend(start.elapsed())).is_some();
        self.game.play_for(color, chosen.mv).map_err(GtpFailure::EngineChoseIllegal)?;
        self.expectation =
            (under_clock && self.engine.config().ponder).then(|| Expectation::new(self.game.position(), &chosen.pv));
        Ok(match chosen.mv {
            Move::Pass => "pass".into(),
            Move::Place(sq) => sq.to_string().to_ascii_uppercase(),
        })
    }
}

/// The board as `showboard` prints it: diagram, side to move, disc counts.
pub(crate) fn showboard(pos: &Position) -> String {
    let (b, w) = (pos.black().count_ones(), pos.white().count_ones());
    let status = if pos.board.is_game_over() {
        "game over".to_string()
    } else if pos.board.must_pass() {
        format!("{} to move (must pass)", pos.side)
    } else {
        format!("{} to move", pos.side)
    };
    format!("\n{}black (X) {b}, white (O) {w}; {status}", pos.diagram())
}

/// Runs the GTP loop until `quit` or the end of the input. The input is read on a
/// thread of its own, so that after a move under a clock the engine can think on the
/// opponent's time (unless its configuration says not to) and still answer the next
/// command at once: any line stops the ponder search.
pub fn run<E: IncrementalEvaluator>(
    engine: &mut Engine<E>,
    input: impl BufRead + Send + 'static,
    mut output: impl Write,
) -> std::io::Result<()> {
    let gate = PonderGate::new(engine.stop_handle().shared());
    // GTP is synchronous: no line stops a search the GUI waits for.
    let lines = ponder::read_on_thread(input, gate.clone(), None);
    let mut session = GtpSession::new(engine);
    let mut queue = VecDeque::new();
    loop {
        let now = session.game.position();
        let Some(line) = ponder::next_line(session.engine, &mut session.expectation, &now, &gate, &lines, &mut queue)
        else {
            return Ok(());
        };
        let answer = |too_long: &_| write!(output, "? {too_long}\n\n").and_then(|()| output.flush());
        let Some(line) = super::protocol_line(line, answer)? else { continue };
        let (id, reply) = match parse_line(&line) {
            Ok(None) => continue,
            Ok(Some(req)) => (
                req.id,
                session.handle(&req.command).map(|t| (t, req.command == Command::Quit)).map_err(|e| e.to_string()),
            ),
            Err(bad) => (bad.id, Err(bad.message)),
        };
        let id = id.map(|i| i.to_string()).unwrap_or_default();
        match reply {
            Ok((text, quit)) => {
                let sep = if text.is_empty() || text.starts_with('\n') { "" } else { " " };
                write!(output, "={id}{sep}{text}\n\n")?;
                output.flush()?;
                if quit {
                    return Ok(());
                }
            }
            Err(message) => {
                write!(output, "?{id} {message}\n\n")?;
                output.flush()?;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_with_ids_comments_and_errors() {
        let r = parse_line("12 play B f5 # comment").unwrap().unwrap();
        assert_eq!(r.id, Some(12));
        assert_eq!(r.command, Command::Play(Color::Black, "f5".parse().unwrap()));
        assert_eq!(parse_line("  # only a comment").unwrap(), None);
        assert_eq!(parse_line("").unwrap(), None);
        assert_eq!(parse_line("genmove white").unwrap().unwrap().command, Command::Genmove(Color::White));
        assert_eq!(parse_line("play w PASS").unwrap().unwrap().command, Command::Play(Color::White, Move::Pass));
        let e = parse_line("7 play x f5").unwrap_err();
        assert_eq!(e.id, Some(7));
        assert!(e.message.contains("invalid color"), "{}", e.message);
        assert!(parse_line("play b z9").unwrap_err().message.contains("invalid move"));
        assert!(parse_line("frobnicate").unwrap_err().message.contains("unknown command"));
        // A value is written back as a person writes it, not as its 301 digits.
        assert_eq!(
            parse_line("time_settings 1e300 0 0").unwrap_err().message,
            "main time must be a number of seconds from 0 up to a year, got 1e300"
        );
        assert!(parse_line("time_settings 1e-300 0 0").is_ok());
        assert!(parse_line("time_left b -0.5 0").unwrap_err().message.ends_with("got -0.5"));
        assert!(parse_line("time_left b -1 0").unwrap_err().message.contains("from 0"));
        assert!(parse_line("99999999999999999999999 name").is_err());
    }

    #[test]
    fn a_line_that_is_not_utf8_is_a_bad_command_and_the_session_goes_on() {
        let config = super::super::EngineConfig {
            search: crate::search::Settings { hash_mib: 1, ..Default::default() },
            book: super::super::BookSource::None,
            ..Default::default()
        };
        let mut engine = Engine::new(config).unwrap();
        let mut out = Vec::new();
        run(&mut engine, &b"\xff\xfe play\r\n2 name\r\n"[..], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("? unknown command `\u{fffd}\u{fffd}`\n\n"), "{text:?}");
        assert!(text.ends_with("=2 thorbook\n\n"), "{text:?}");
    }

    #[test]
    fn a_line_over_the_bound_is_answered_as_an_error_and_the_session_goes_on() {
        use crate::engine::MAX_LINE;
        let config = super::super::EngineConfig {
            search: crate::search::Settings { hash_mib: 1, ..Default::default() },
            book: super::super::BookSource::None,
            ..Default::default()
        };
        let mut engine = Engine::new(config).unwrap();
        // Lines just under, at and just over the bound, then a stream with no newline.
        for (len, ok) in [(MAX_LINE - 1, true), (MAX_LINE, true), (MAX_LINE + 1, false)] {
            let mut input = format!("1 name #{}", "x".repeat(len - 8)).into_bytes();
            assert_eq!(input.len(), len);
            input.extend_from_slice(b"\n2 name\n");
            let mut out = Vec::new();
            run(&mut engine, std::io::Cursor::new(input), &mut out).unwrap();
            let text = String::from_utf8(out).unwrap();
            let expected = if ok {
                "=1 thorbook\n\n=2 thorbook\n\n".to_string()
            } else {
                format!("? line 1 is longer than {MAX_LINE} bytes; it is ignored\n\n=2 thorbook\n\n")
            };
            assert_eq!(text, expected, "a line of {len} bytes");
        }
        let mut out = Vec::new();
        run(&mut engine, std::io::Cursor::new(vec![b'x'; 3 * MAX_LINE]), &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("? line 1 is longer than {MAX_LINE} bytes; it is ignored\n\n")
        );
    }

    #[test]
    fn after_a_move_under_a_clock_the_session_ponders_the_expected_reply_and_a_hit_uses_it() {
        let engine_with = |ponder: bool| {
            let search = crate::search::Settings {
                hash_mib: 8,
                threads: 1,
                level: crate::search::Level::new(4).ok(),
                ..Default::default()
            };
            let config = super::super::EngineConfig {
                search,
                book: super::super::BookSource::None,
                ponder,
                ..Default::default()
            };
            Engine::new(config).unwrap()
        };
        let handle = |session: &mut GtpSession<'_, crate::eval::AnyEval>, line: &str| {
            session.handle(&parse_line(line).unwrap().unwrap().command).unwrap()
        };
        let (mut pondering, mut fresh, mut off) = (engine_with(true), engine_with(true), engine_with(false));
        let (_tx, lines) = std::sync::mpsc::channel::<String>();
        let mut queue = VecDeque::new();
        let mut replies = Vec::new();
        for engine in [&mut pondering, &mut off] {
            let gate = PonderGate::new(engine.stop_handle().shared());
            let mut session = GtpSession::new(engine);
            handle(&mut session, "time_settings 60 0 0");
            handle(&mut session, "play b f5");
            handle(&mut session, "genmove w");
            let expected = session.expectation.and_then(|e| e.search_at(&session.game.position()));
            let now = session.game.position();
            // No line arrives: the level-capped ponder search runs to its end.
            ponder::while_idle(session.engine, &mut session.expectation, &now, &gate, &lines, &mut queue);
            replies.push((expected, session.engine.pondered.as_ref().map(|p| (p.board, p.finished, p.result.nodes))));
        }
        let (expected, pondered) = replies[0];
        let expected = expected.expect("a move under a clock leaves an expectation");
        let (board, finished, ponder_nodes) = pondered.expect("the session pondered");
        assert!(board == expected.board && finished);
        assert_eq!(replies[1], (None, None), "--no-ponder: nothing expected, nothing searched");
        // The ponder hit: the position it searched is answered from it, with the move
        // a fresh search at the same settings finds.
        let limits = pondering.strength().limits(&expected.board);
        let fresh_move = fresh.search(&expected, limits).best_move();
        let hit = pondering.choose(&expected).unwrap();
        assert_eq!(hit.nodes, ponder_nodes, "the hit is the ponder's search, not a new one");
        assert_eq!(Some(hit.mv), fresh_move);
    }
}
