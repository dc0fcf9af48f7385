//! Engine-versus-engine matches: two engine processes (GTP or NBoard), both colours
//! from each opening, every move checked, passes handled, and a fault (time-out,
//! illegal move, crash, refused command) losing the game for the side at fault. The
//! result is W/D/L, the average disc difference, an Elo estimate with a 95% interval
//! and the time per move by game phase for each side.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::clock::TimeControl;
use super::game::Game;
use super::ggf;
use crate::board::Color;
use crate::position::Position;
use crate::results::win_rate;
use crate::setting::{check, OutOfRange, Setting};
use crate::square::{parse_move_sequence, Move};

/// The protocol a match speaks to an engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// GTP (version 2, Othello conventions).
    Gtp,
    /// NBoard (version 2).
    NBoard,
}

/// One side of a match: how to start it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayerSpec {
    /// Program and arguments.
    pub command: Vec<String>,
    /// How to talk to it.
    pub protocol: Protocol,
    /// A short name for reports.
    pub name: String,
}

/// What a match plays.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct MatchConfig {
    /// Engine A.
    pub a: PlayerSpec,
    /// Engine B.
    pub b: PlayerSpec,
    /// Games to play (pairs from each opening: A black, then B black).
    pub games: usize,
    /// Opening lines, played before the engines take over.
    pub openings: Vec<Vec<Move>>,
    /// Time per move given to the engines (GTP `time_settings 0 S 1`).
    pub time_per_move: Option<Duration>,
    /// A game clock: this much time for each side's moves of a game (GTP
    /// `time_settings S 0 0` with `time_left` before every move, NBoard `TI`). A side
    /// whose moves take more in all loses the game on time, as the match measures it.
    pub clock: Option<Duration>,
    /// A move slower than this loses the game.
    pub move_timeout: Duration,
}

/// The most games a match plays.
pub(crate) const MAX_GAMES: usize = 100_000;

impl MatchConfig {
    /// `a` against `b` over the bundled openings, both colours of each: one game an
    /// opening and colour, no time limit a move, two minutes before an engine that
    /// does not answer forfeits.
    pub fn new(a: PlayerSpec, b: PlayerSpec) -> MatchConfig {
        let openings = bundled_openings();
        MatchConfig {
            a,
            b,
            games: openings.len() * 2,
            openings,
            time_per_move: None,
            clock: None,
            move_timeout: Duration::from_secs(120),
        }
    }
}

/// The two sides of a match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Engine A.
    A,
    /// Engine B.
    B,
}

impl Side {
    /// Index into a pair ordered (A, B).
    fn index(self) -> usize {
        match self {
            Side::A => 0,
            Side::B => 1,
        }
    }
}

/// A game lost by a fault rather than on the board.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forfeit {
    /// The side at fault.
    pub side: Side,
    /// What happened.
    pub reason: String,
}

/// The result of a match game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Engine A won.
    AWins,
    /// A draw.
    Draw,
    /// Engine B won.
    BWins,
}

/// One finished match game.
#[derive(Clone, Debug)]
pub struct GameRecord {
    /// 1-based game number.
    pub number: usize,
    /// Index of the opening in the config.
    pub opening: usize,
    /// The colour A played.
    pub a_color: Color,
    /// Every move from the start, opening and passes included.
    pub moves: Vec<Move>,
    /// Black's final disc difference (empties to the winner), when finished on the board.
    pub black_score: Option<i32>,
    /// Set when the game was lost by a fault.
    pub forfeit: Option<Forfeit>,
    /// Each engine move: who, empties before it, time taken.
    pub move_times: Vec<(Side, u32, Duration)>,
}

impl GameRecord {
    /// Who won, forfeits included.
    pub(crate) fn outcome(&self) -> Outcome {
        match (&self.forfeit, self.a_disc_diff()) {
            (Some(f), _) if f.side == Side::A => Outcome::BWins,
            (Some(_), _) => Outcome::AWins,
            (None, Some(d)) if d > 0 => Outcome::AWins,
            (None, Some(d)) if d < 0 => Outcome::BWins,
            _ => Outcome::Draw,
        }
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// A's result: 1 win, ½ draw, 0 loss.
    pub(crate) fn a_points(&self) -> f64 {
        match self.outcome() {
            Outcome::AWins => 1.0,
            Outcome::Draw => 0.5,
            Outcome::BWins => 0.0,
        }
    }

    /// A's final disc difference, when the game finished on the board.
    pub(crate) fn a_disc_diff(&self) -> Option<i32> {
        self.black_score.map(|s| if self.a_color == Color::Black { s } else { -s })
    }
}

/// Totals over a match.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct MatchSummary {
    /// Games played.
    pub games: usize,
    /// A's wins, draws, losses.
    pub wins: usize,
    /// Draws.
    pub draws: usize,
    /// A's losses.
    pub losses: usize,
    /// Games lost by a fault, per side (A, B).
    pub forfeits: (usize, usize),
    /// A's average disc difference over games finished on the board.
    pub average_disc_diff: Option<f64>,
    /// A's Elo difference over B, with the 95% interval (`None` where infinite).
    pub elo: EloEstimate,
    /// Average time per move, per phase (> 40, 21–40, ≤ 20 empties), for A and B.
    pub time_per_move: [[Option<Duration>; 3]; 2],
    /// Time a game, for A and B: the mean and the most over the games (the time of
    /// each side's moves, as the match measured it).
    pub time_per_game: [Option<GameTime>; 2],
}

/// One side's time over the games of a match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameTime {
    /// The mean over the games.
    pub mean: Duration,
    /// The most any game took.
    pub max: Duration,
}

impl MatchSummary {
    /// A's share of the points (a draw is half a win); `None` before any game.
    pub fn score(&self) -> Option<f64> {
        win_rate(self.wins as u64, self.draws as u64, self.games as u64)
    }
}

/// An Elo difference from a score, with a 95% interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EloEstimate {
    /// The point estimate (`None`: a score of 0 or 1).
    pub elo: Option<f64>,
    /// Lower end of the 95% interval.
    pub low: Option<f64>,
    /// Upper end.
    pub high: Option<f64>,
}

fn elo_of(score: f64) -> Option<f64> {
    (score > 0.0 && score < 1.0).then(|| -400.0 * (1.0 / score - 1.0).log10())
}

/// Elo of a W/D/L record with a 95% interval: the Wilson score interval of the score
/// fraction (draws count half), which stays finite for all-win or all-loss records.
pub(crate) fn elo_estimate(wins: usize, draws: usize, losses: usize) -> EloEstimate {
    let Some(s) = win_rate(wins as u64, draws as u64, (wins + draws + losses) as u64) else {
        return EloEstimate { elo: None, low: None, high: None };
    };
    let n = (wins + draws + losses) as f64;
    let z: f64 = 1.96;
    let denominator = 1.0 + z * z / n;
    let centre = (s + z * z / (2.0 * n)) / denominator;
    let margin = z * (s * (1.0 - s) / n + z * z / (4.0 * n * n)).sqrt() / denominator;
    EloEstimate { elo: elo_of(s), low: elo_of(centre - margin), high: elo_of(centre + margin) }
}

/// Reads an openings file: one move sequence a line from the start position, `#`
/// comments and blank lines ignored; every line checked by replay.
pub(crate) fn parse_openings(text: &str) -> Result<Vec<Vec<Move>>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let moves = parse_move_sequence(line).map_err(|e| format!("line {}: {e}", i + 1))?;
        let end = Position::START.play_sequence(&moves).map_err(|e| format!("line {}: {e}", i + 1))?;
        if end.board.is_game_over() {
            return Err(format!("line {}: the opening ends the game", i + 1));
        }
        out.push(moves);
    }
    if out.is_empty() {
        return Err("no openings".into());
    }
    Ok(out)
}

/// The openings bundled in the binary (`data/openings.txt`).
pub(crate) fn bundled_openings() -> Vec<Vec<Move>> {
    parse_openings(include_str!("../../data/openings.txt")).expect("the bundled openings are valid")
}

/// What went wrong talking to an engine.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Fault {
    Timeout(Duration),
    Crashed,
    Refused(String),
    Garbled(String),
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fault::Timeout(d) => write!(f, "no answer within {:.1} s", d.as_secs_f64()),
            Fault::Crashed => write!(f, "the engine exited"),
            Fault::Refused(m) => write!(f, "the engine refused: {m}"),
            Fault::Garbled(m) => write!(f, "unreadable answer: {m}"),
        }
    }
}

/// A running engine process.
struct Client {
    spec: PlayerSpec,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    pings: u64,
    /// The longest wait for any answer (the match's move time-out).
    timeout: Duration,
}

impl Client {
    fn spawn(spec: &PlayerSpec, timeout: Duration) -> std::io::Result<Client> {
        let (program, args) = spec
            .command
            .split_first()
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "empty engine command"))?;
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut client = Client { spec: spec.clone(), child, stdin, lines: rx, pings: 0, timeout };
        if spec.protocol == Protocol::NBoard {
            client.send("nboard 2").map_err(|f| std::io::Error::other(f.to_string()))?;
        }
        Ok(client)
    }

    fn send(&mut self, line: &str) -> Result<(), Fault> {
        writeln!(self.stdin, "{line}").and_then(|_| self.stdin.flush()).map_err(|_| Fault::Crashed)
    }

    /// The engine's next line, waiting until `deadline` at most (the end of a `wait`
    /// that a time-out names).
    fn recv(&mut self, deadline: Instant, wait: Duration) -> Result<String, Fault> {
        match self.lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) => Ok(line),
            Err(RecvTimeoutError::Timeout) => Err(Fault::Timeout(wait)),
            Err(RecvTimeoutError::Disconnected) => Err(Fault::Crashed),
        }
    }

    /// One GTP exchange: the answer's text, or the engine's `?` message as a fault.
    fn gtp(&mut self, command: &str) -> Result<String, Fault> {
        self.gtp_within(command, self.timeout)
    }

    /// [`Client::gtp`], waiting `wait` at most.
    fn gtp_within(&mut self, command: &str, wait: Duration) -> Result<String, Fault> {
        self.send(command)?;
        let deadline = Instant::now() + wait;
        let first = loop {
            let line = self.recv(deadline, wait)?;
            if line.starts_with('=') || line.starts_with('?') {
                break line;
            }
        };
        let mut text = first[1..].trim_start_matches(|c: char| c.is_ascii_digit()).trim().to_string();
        loop {
            let line = self.recv(deadline, wait)?;
            if line.trim().is_empty() {
                break;
            }
            text.push('\n');
            text.push_str(&line);
        }
        if first.starts_with('?') {
            Err(Fault::Refused(format!("`{command}`: {text}")))
        } else {
            Ok(text)
        }
    }

    /// NBoard: waits until the engine has handled everything sent so far.
    fn sync(&mut self) -> Result<(), Fault> {
        self.pings += 1;
        let n = self.pings;
        self.send(&format!("ping {n}"))?;
        let deadline = Instant::now() + self.timeout;
        let want = format!("pong {n}");
        while self.recv(deadline, self.timeout)?.trim() != want {}
        Ok(())
    }

    /// Sets up a new game at the end of `game` (the opening).
    fn new_game(&mut self, game: &Game, control: Option<TimeControl>) -> Result<(), Fault> {
        match self.spec.protocol {
            Protocol::Gtp => {
                self.gtp("boardsize 8")?;
                self.gtp("clear_board")?;
                if let Some(c) = control {
                    // Engines that ignore time controls may refuse them; that is not a fault.
                    let _ = self.gtp(&format!(
                        "time_settings {} {} {}",
                        c.main.as_secs_f64(),
                        c.byo_yomi.as_secs_f64().max(if c.stones > 0 { 0.001 } else { 0.0 }),
                        c.stones
                    ));
                }
                for (pos, mv) in game.positions().iter().zip(game.moves()) {
                    self.tell(pos.side, mv)?;
                }
                Ok(())
            }
            Protocol::NBoard => {
                let ti = control.and_then(TimeControl::to_ggf);
                self.send(&format!("set game {}", ggf::write(game, "black", "white", ti.as_deref())))?;
                self.sync()
            }
        }
    }

    /// Tells the engine a move `color` played (its own, for NBoard, too).
    fn tell(&mut self, color: Color, mv: Move) -> Result<(), Fault> {
        match (self.spec.protocol, mv) {
            // GTP engines infer passes (GRhino refuses `play X pass`).
            (Protocol::Gtp, Move::Pass) => Ok(()),
            (Protocol::Gtp, Move::Place(_)) => {
                let c = if color == Color::Black { "b" } else { "w" };
                self.gtp(&format!("play {c} {}", ggf::move_text(mv))).map(|_| ())
            }
            (Protocol::NBoard, _) => self.send(&format!("move {}", ggf::move_text(mv))),
        }
    }

    /// Asks for `color`'s move; with `left` on its clock, tells a GTP engine so first
    /// and waits no longer than that.
    fn ask(&mut self, color: Color, left: Option<Duration>) -> Result<Move, Fault> {
        let c = if color == Color::Black { "b" } else { "w" };
        if let (Some(left), Protocol::Gtp) = (left, self.spec.protocol) {
            let _ = self.gtp(&format!("time_left {c} {:.3} 0", left.as_secs_f64()));
        }
        let wait = left.map_or(self.timeout, |left| self.timeout.min(left));
        let answer = match self.spec.protocol {
            Protocol::Gtp => self.gtp_within(&format!("genmove {c}"), wait)?,
            Protocol::NBoard => {
                self.send("go")?;
                let deadline = Instant::now() + wait;
                loop {
                    let line = self.recv(deadline, wait)?;
                    if let Some(rest) = line.strip_prefix("===") {
                        break rest.trim().split(['/', ' ']).next().unwrap_or("").to_string();
                    }
                }
            }
        };
        let word = answer.split_whitespace().next().unwrap_or("");
        word.parse::<Move>().map_err(|_| Fault::Garbled(format!("`{answer}` is not a move")))
    }

    fn quit(mut self) {
        let _ = self.send("quit");
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Errors that stop a match (faults inside games only lose those games).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MatchError {
    /// An engine cannot be started at all.
    #[error("cannot start engine {} (`{}`): {source}", player.name, player.command.join(" "))]
    Spawn {
        /// The engine.
        player: PlayerSpec,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Nothing to play: no game or no opening.
    #[error(transparent)]
    Setting(#[from] OutOfRange),
}

fn spawn(spec: &PlayerSpec, timeout: Duration) -> Result<Client, MatchError> {
    Client::spawn(spec, timeout).map_err(|source| MatchError::Spawn { player: spec.clone(), source })
}

/// Plays one game; `clients[0]` is A, `clients[1]` B.
fn play_game(
    config: &MatchConfig,
    clients: &mut [Client; 2],
    number: usize,
    opening: usize,
    a_color: Color,
) -> GameRecord {
    let mut game = Game::default();
    for &mv in &config.openings[opening] {
        game.play_inferring_pass(mv).expect("openings are checked when loaded");
    }
    let mut move_times = Vec::new();
    let forfeit = play_out(config, clients, &mut game, a_color, &mut move_times).err();
    GameRecord {
        number,
        opening,
        a_color,
        moves: game.moves(),
        black_score: forfeit.is_none().then(|| game.black_score()),
        forfeit,
        move_times,
    }
}

/// Plays `game` from the end of its opening to the end, or to the first fault.
fn play_out(
    config: &MatchConfig,
    clients: &mut [Client; 2],
    game: &mut Game,
    a_color: Color,
    move_times: &mut Vec<(Side, u32, Duration)>,
) -> Result<(), Forfeit> {
    let side_of = |color: Color| if color == a_color { Side::A } else { Side::B };
    let fault = |side: Side, reason: String| Forfeit { side, reason };
    let control = match (config.clock, config.time_per_move) {
        (Some(main), _) => Some(TimeControl::main_only(main)),
        (None, Some(t)) => Some(TimeControl::per_move(t)),
        (None, None) => None,
    };
    for side in [Side::A, Side::B] {
        clients[side.index()].new_game(game, control).map_err(|f| fault(side, format!("setting up the game: {f}")))?;
    }
    let mut left = [config.clock; 2];
    while !game.is_over() {
        let pos = game.position();
        let mv = if pos.board.must_pass() {
            Move::Pass
        } else {
            let mover = side_of(pos.side);
            let start = Instant::now();
            let answer = clients[mover.index()].ask(pos.side, left[mover.index()]);
            let took = start.elapsed();
            move_times.push((mover, pos.board.empty_count(), took));
            let at = || format!("{} to move at ply {}", pos.side, game.ply() + 1);
            if let Some(l) = &mut left[mover.index()] {
                match l.checked_sub(took) {
                    Some(rest) if !rest.is_zero() => *l = rest,
                    _ => {
                        let clock = config.clock.unwrap_or_default().as_secs_f64();
                        return Err(fault(mover, format!("{}: lost on time (its {clock:.3} s were used up)", at())));
                    }
                }
            }
            answer.map_err(|f| fault(mover, format!("{}: {f}", at())))?
        };
        // Checked for every answer, a pass while a move exists included.
        game.play(mv).map_err(|e| fault(side_of(pos.side), format!("illegal move: {e}")))?;
        // GTP engines know their own moves; NBoard engines are told every move.
        for side in [Side::A, Side::B] {
            let client = &mut clients[side.index()];
            if side != side_of(pos.side) || client.spec.protocol == Protocol::NBoard {
                client.tell(pos.side, mv).map_err(|f| fault(side, format!("told {mv}: {f}")))?;
            }
        }
    }
    Ok(())
}

/// Plays the match, calling `on_game` after each game.
pub fn run_match(config: &MatchConfig, mut on_game: impl FnMut(&GameRecord)) -> Result<MatchSummary, MatchError> {
    if config.openings.is_empty() {
        return Err(OutOfRange::new(Setting::Openings, 0, "at least 1").into());
    }
    check(Setting::Games, config.games, 1..=MAX_GAMES)?;
    let mut clients = [spawn(&config.a, config.move_timeout)?, spawn(&config.b, config.move_timeout)?];
    let mut records = Vec::with_capacity(config.games);
    for g in 0..config.games {
        let opening = (g / 2) % config.openings.len();
        let a_color = if g % 2 == 0 { Color::Black } else { Color::White };
        let record = play_game(config, &mut clients, g + 1, opening, a_color);
        if let Some(f) = &record.forfeit {
            // The faulty engine may be in any state: start it again.
            let spec = if f.side == Side::A { &config.a } else { &config.b };
            let fresh = spawn(spec, config.move_timeout)?;
            std::mem::replace(&mut clients[f.side.index()], fresh).quit();
        }
        on_game(&record);
        records.push(record);
    }
    let [a, b] = clients;
    a.quit();
    b.quit();
    Ok(summarize(&records))
}

/// Totals of a set of games.
pub(crate) fn summarize(records: &[GameRecord]) -> MatchSummary {
    let (mut wins, mut draws, mut losses) = (0, 0, 0);
    let mut forfeits = (0, 0);
    let (mut disc_sum, mut disc_n) = (0i64, 0usize);
    let mut times = [[(Duration::ZERO, 0u32); 3]; 2];
    for r in records {
        match r.outcome() {
            Outcome::AWins => wins += 1,
            Outcome::Draw => draws += 1,
            Outcome::BWins => losses += 1,
        }
        match r.forfeit.as_ref().map(|f| f.side) {
            Some(Side::A) => forfeits.0 += 1,
            Some(Side::B) => forfeits.1 += 1,
            None => {}
        }
        if let Some(d) = r.a_disc_diff() {
            disc_sum += d as i64;
            disc_n += 1;
        }
        for &(side, empties, took) in &r.move_times {
            let phase = match empties {
                41.. => 0,
                21..=40 => 1,
                _ => 2,
            };
            let slot = &mut times[if side == Side::A { 0 } else { 1 }][phase];
            slot.0 += took;
            slot.1 += 1;
        }
    }
    let time_per_move = times.map(|side| side.map(|(total, n)| (n > 0).then(|| total / n)));
    let time_per_game = [Side::A, Side::B].map(|side| {
        let per_game: Vec<Duration> = records
            .iter()
            .map(|r| r.move_times.iter().filter(|t| t.0 == side).map(|t| t.2).sum::<Duration>())
            .collect();
        let games = u32::try_from(per_game.len()).ok().filter(|&n| n > 0)?;
        Some(GameTime { mean: per_game.iter().sum::<Duration>() / games, max: per_game.iter().copied().max()? })
    });
    MatchSummary {
        games: records.len(),
        wins,
        draws,
        losses,
        forfeits,
        average_disc_diff: (disc_n > 0).then(|| disc_sum as f64 / disc_n as f64),
        elo: elo_estimate(wins, draws, losses),
        time_per_move,
        time_per_game,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elo_of_known_scores() {
        let e = elo_estimate(75, 0, 25);
        assert!((e.elo.unwrap() - 190.85).abs() < 0.1, "{e:?}");
        assert!(e.low.unwrap() < e.elo.unwrap() && e.high.unwrap() > e.elo.unwrap());
        assert_eq!(elo_estimate(5, 0, 5).elo, Some(0.0));
        let all = elo_estimate(3, 0, 0);
        assert_eq!(all.elo, None);
        // Three wins in three games: the score could be as low as 44% (Wilson).
        assert!((all.low.unwrap() + 43.0).abs() < 1.0 && all.high.is_none(), "{all:?}");
        assert_eq!(elo_estimate(0, 0, 0).elo, None);
    }

    #[test]
    fn openings_are_checked() {
        assert_eq!(parse_openings("f5d6 # tiger-ish\n\nf5f6\n").unwrap().len(), 2);
        assert!(parse_openings("f5f5").unwrap_err().contains("line 1"));
        assert!(parse_openings("# nothing").is_err());
        assert!(!bundled_openings().is_empty());
    }
}
