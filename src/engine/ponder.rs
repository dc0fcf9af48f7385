//! Thinking on the opponent's time: what the engine ponders after its move, the
//! protocol loops' input reader, and the gate between that reader and a ponder
//! search, so that any line the GUI sends stops the search at once and the line is
//! answered as if the engine had been idle.
//!
//! The engine ponders the position it expects after the opponent's reply (its own
//! principal variation's second move), or the position after its own move when it
//! expects no reply. What the search finds stays in the transposition table: on a
//! ponder hit the next move's iterations reach the pondered depth almost at once; on
//! a miss the search was stopped as the opponent's move arrived and costs nothing.

use std::collections::VecDeque;
use std::io::BufRead;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering::SeqCst};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::sync::Arc;

use super::Engine;
use crate::eval::IncrementalEvaluator;
use crate::position::Position;
use crate::square::Move;

/// What to ponder after a move of the engine's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Expectation {
    /// The game's position after the engine's move: pondering applies while the game
    /// stands here (the opponent to move).
    after_own_move: Position,
    /// The position searched.
    search: Position,
}

impl Expectation {
    /// After the engine played into `after_own_move` expecting `pv` (its move first).
    pub(crate) fn new(after_own_move: Position, pv: &[Move]) -> Expectation {
        let search = pv.get(1).and_then(|&reply| after_own_move.try_play(reply).ok()).unwrap_or(after_own_move);
        Expectation { after_own_move, search }
    }

    /// The position to ponder while the game stands at `now`: `None` once the game
    /// has moved on (the opponent played, a move was taken back, a new game began).
    pub(crate) fn search_at(&self, now: &Position) -> Option<Position> {
        (*now == self.after_own_move && !self.search.board.is_game_over()).then_some(self.search)
    }
}

const IDLE: u8 = 0;
const PONDERING: u8 = 1;
const INTERRUPTED: u8 = 2;

/// Shared between a protocol loop and its input reader: stops a ponder search when a
/// line arrives, and only a ponder search.
#[derive(Clone)]
pub(crate) struct PonderGate {
    state: Arc<AtomicU8>,
    /// The engine's stop flag.
    stop: Arc<AtomicBool>,
}

impl PonderGate {
    pub(crate) fn new(stop: Arc<AtomicBool>) -> PonderGate {
        PonderGate { state: Arc::new(AtomicU8::new(IDLE)), stop }
    }

    /// Called by the reader after each line it has queued: stops a ponder search in
    /// progress.
    pub(crate) fn line_arrived(&self) {
        if self.state.compare_exchange(PONDERING, INTERRUPTED, SeqCst, SeqCst).is_ok() {
            self.stop.store(true, SeqCst);
        }
    }

    /// Ponders with `think` unless `line_waiting` finds a line already queued (it is
    /// asked after the gate opens, so a line is either seen there or stops `think`).
    /// Leaves the stop flag as it found it: clear.
    pub(crate) fn ponder(&self, line_waiting: impl FnOnce() -> bool, think: impl FnOnce()) {
        self.state.store(PONDERING, SeqCst);
        if !line_waiting() {
            think();
        }
        if self.state.swap(IDLE, SeqCst) == INTERRUPTED {
            // The reader sets the flag right after its exchange: wait for it, so that it
            // cannot land after the clear below and stop the next search.
            while !self.stop.load(SeqCst) {
                std::hint::spin_loop();
            }
            self.stop.store(false, SeqCst);
        }
    }
}

/// Which line's search a line may stop: the loop numbers the lines it handles (their
/// generation, from 1) and a line may stop only the search of an older one, never its
/// own or a newer one's. The reader's "is an older line being handled?" and its store
/// of the stop flag happen under one lock with the loop's change of line, so a line
/// that starts between the two cannot be stopped by the line it is answering.
#[derive(Clone)]
pub(crate) struct LineGeneration {
    /// The line being handled, 0 when idle.
    handling: Arc<std::sync::Mutex<u64>>,
    /// The engine's stop flag.
    stop: Arc<AtomicBool>,
}

impl LineGeneration {
    pub(crate) fn new(stop: Arc<AtomicBool>) -> LineGeneration {
        LineGeneration { handling: Arc::new(std::sync::Mutex::new(0)), stop }
    }

    fn handling(&self) -> std::sync::MutexGuard<'_, u64> {
        // The guarded number is valid whatever a panicking holder left.
        self.handling.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The loop starts handling line `number`: a stop meant for an earlier line is
    /// cleared with the change.
    pub(crate) fn begin(&self, number: u64) {
        let mut h = self.handling();
        self.stop.store(false, SeqCst);
        *h = number;
    }

    /// The loop is done with its line: a stop that came too late for it is cleared,
    /// and none lands until the next [`LineGeneration::begin`].
    pub(crate) fn end(&self) {
        let mut h = self.handling();
        self.stop.store(false, SeqCst);
        *h = 0;
    }

    /// Line `number` arrived and interrupts: stops the search of the line being
    /// handled if that line is older; returns whether it did.
    pub(crate) fn interrupt_older_than(&self, number: u64) -> bool {
        let h = self.handling();
        let older = *h != 0 && *h < number;
        // Tests widen the gap between the check and the store, where a loop changing
        // line must not get in.
        #[cfg(test)]
        std::thread::yield_now();
        if older {
            self.stop.store(true, SeqCst);
        }
        older
    }
}

/// Lines that stop a search of an earlier line (NBoard's `go`, `ping`, …): the test,
/// and the generation of the line being handled, which the loop sets.
pub(crate) struct Interrupts {
    pub(crate) stops: fn(&str) -> bool,
    pub(crate) lines: LineGeneration,
}

/// Reads a protocol's input on a thread of its own, so that the loop can search or
/// ponder while the GUI sends: each line is queued on the returned channel, then stops
/// the search of an earlier line if `interrupts` says so, then is reported to `gate`;
/// the end of the input is reported too. The thread is not joined: after `quit` the GUI
/// may keep the pipe open, and the reader, blocked on it, ends with the process.
pub(crate) fn read_on_thread(
    input: impl BufRead + Send + 'static,
    gate: PonderGate,
    interrupts: Option<Interrupts>,
) -> Receiver<std::io::Result<String>> {
    let (lines_tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for (number, line) in (1u64..).zip(super::protocol_lines(input)) {
            let stops = match (&interrupts, &line) {
                (Some(i), Ok(text)) => (i.stops)(text),
                _ => false,
            };
            if lines_tx.send(line).is_err() {
                break;
            }
            // After the send: a loop not yet busy with an earlier line sees it queued.
            if let Some(i) = interrupts.as_ref().filter(|_| stops) {
                i.lines.interrupt_older_than(number);
            }
            gate.line_arrived();
        }
        drop(lines_tx);
        gate.line_arrived();
    });
    lines
}

/// A protocol loop's next line (`None` at the end of the input): the first queued,
/// or, when none is, the next to arrive, pondering what `expectation` says meanwhile.
pub(crate) fn next_line<E: IncrementalEvaluator, L>(
    engine: &mut Engine<E>,
    expectation: &mut Option<Expectation>,
    now: &Position,
    gate: &PonderGate,
    lines: &Receiver<L>,
    queue: &mut VecDeque<L>,
) -> Option<L> {
    while_idle(engine, expectation, now, gate, lines, queue);
    queue.pop_front().or_else(|| lines.recv().ok())
}

/// Between a protocol loop's lines: ponders what `expectation` says while the game
/// stands at `now`, unless a line is already waiting in `lines` (it is moved to
/// `queue`), until a line arrives. The expectation is dropped once its search has
/// ended by itself; it stays while the game has not reached it yet (an NBoard GUI
/// echoes the engine's move after `go`) or has left it (nothing is searched then).
pub(crate) fn while_idle<E: IncrementalEvaluator, L>(
    engine: &mut Engine<E>,
    expectation: &mut Option<Expectation>,
    now: &Position,
    gate: &PonderGate,
    lines: &Receiver<L>,
    queue: &mut VecDeque<L>,
) {
    let Some(pos) = expectation.and_then(|e| e.search_at(now)) else {
        return;
    };
    if !queue.is_empty() {
        return;
    }
    let mut finished = false;
    gate.ponder(
        || match lines.try_recv() {
            Ok(line) => {
                queue.push_back(line);
                true
            }
            Err(TryRecvError::Disconnected) => true,
            Err(TryRecvError::Empty) => false,
        },
        || finished = engine.ponder(&pos),
    );
    if finished {
        *expectation = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Color;
    use crate::engine::EngineConfig;
    use crate::search::{Settings, Strength};
    use crate::square::parse_move_sequence;
    use crate::testutil::{random_position, Rng};

    /// A line arrives (number n + 1) just as the loop ends line n and begins line
    /// n + 1, the two racing from a barrier: the new line may stop line n (which the
    /// loop's `end` then clears) but never itself, so no stop is left after the race.
    /// A reader that checks the line and stores the flag in two steps leaves one now
    /// and then.
    #[test]
    fn a_line_stops_only_older_lines_when_it_races_the_loop() {
        let stop = Arc::new(AtomicBool::new(false));
        let lines = LineGeneration::new(stop.clone());
        let rounds = 20_000u64;
        let barrier = Arc::new(std::sync::Barrier::new(2));
        let reader = {
            let (lines, barrier) = (lines.clone(), barrier.clone());
            std::thread::spawn(move || {
                for n in 1..=rounds {
                    barrier.wait();
                    lines.interrupt_older_than(2 * n);
                    barrier.wait();
                }
            })
        };
        let mut left = 0;
        for n in 1..=rounds {
            lines.begin(2 * n - 1);
            barrier.wait();
            lines.end();
            lines.begin(2 * n);
            barrier.wait();
            left += u32::from(stop.load(SeqCst));
            lines.end();
        }
        reader.join().unwrap();
        assert_eq!(left, 0, "a line stopped its own search {left} times in {rounds} races");
    }

    #[test]
    fn the_expected_reply_is_pondered_and_only_while_the_game_waits_for_it() {
        let after = Position::from_moves("f5").unwrap();
        let pv = parse_move_sequence("f5d6c3").unwrap();
        let e = Expectation::new(after, &pv);
        assert_eq!(e.search_at(&after), Some(Position::from_moves("f5d6").unwrap()));
        assert_eq!(e.search_at(&Position::from_moves("f5f6").unwrap()), None);
        // No reply expected (a book move), or an impossible one: the position itself.
        assert_eq!(Expectation::new(after, &pv[..1]).search_at(&after), Some(after));
        let bad = parse_move_sequence("f5a1").unwrap();
        assert_eq!(Expectation::new(after, &bad).search_at(&after), Some(after));
    }

    #[test]
    fn a_line_stops_pondering_and_leaves_the_stop_flag_clear() {
        let stop = Arc::new(AtomicBool::new(false));
        let gate = PonderGate::new(stop.clone());
        // A line while thinking: the search sees the flag, and after it the flag is clear.
        let seen = std::thread::scope(|s| {
            let reader = gate.clone();
            s.spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(20));
                reader.line_arrived();
            });
            let mut seen = false;
            gate.ponder(
                || false,
                || {
                    while !stop.load(SeqCst) {
                        std::hint::spin_loop();
                    }
                    seen = true;
                },
            );
            seen
        });
        assert!(seen && !stop.load(SeqCst));
        // A line already waiting: no thinking at all.
        let mut thought = false;
        gate.ponder(|| true, || thought = true);
        assert!(!thought && !stop.load(SeqCst));
        // Lines while idle never touch the flag.
        gate.line_arrived();
        assert!(!stop.load(SeqCst));
    }

    fn engine() -> Engine {
        let search = Settings { hash_mib: 16, threads: 1, ..Settings::default() };
        let config = EngineConfig { search, book: crate::book::BookSource::None, ..EngineConfig::default() };
        Engine::new(config).unwrap()
    }

    #[test]
    fn a_ponder_hit_or_miss_leaves_the_move_a_fresh_search_finds() {
        let depth = Strength { exact_at: Some(0), ..Strength::for_depth(6) };
        let deeper = Strength { exact_at: Some(0), ..Strength::for_depth(9) };
        let mut rng = Rng(7);
        let (mut same, mut tried) = (0, 0);
        for i in 0..24 {
            let board = random_position(&mut rng, 30 + (i % 16));
            let pos = Position { board, side: Color::Black };
            let other = Position { board: random_position(&mut rng, 34), side: Color::Black };
            let mut fresh = engine();
            fresh.set_strength(depth);
            let want = fresh.choose(&pos).unwrap();
            // A hit pondered as deep as the move is searched (deeper, the table would
            // rightly give a deeper answer), a miss deeper.
            for (pondered, ponder_strength) in [(pos, depth), (other, deeper)] {
                let mut e = engine();
                e.set_strength(ponder_strength);
                assert!(e.ponder(&pondered), "an unstopped ponder search ends by itself");
                e.set_strength(depth);
                let got = e.choose(&pos).unwrap();
                tried += 1;
                same += usize::from(got.mv == want.mv);
            }
        }
        assert_eq!(same, tried);
    }
}
