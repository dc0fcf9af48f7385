//! Time management for games under a clock: GTP's `time_settings` (main time, then
//! byo-yomi periods of some stones) and `time_left`, and GGF's `TI` (main time,
//! increment, extension) that NBoard sends, turned into a budget per move.
//!
//! The budget spreads the time left over the moves the engine still has to make
//! before the position becomes cheap to solve, keeping a safety margin for the time
//! the protocol and the process take around each search.

use std::time::Duration;

/// Time controls as GTP states them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeControl {
    /// Main time for the whole game.
    pub main: Duration,
    /// Byo-yomi period after the main time (zero: none).
    pub byo_yomi: Duration,
    /// Stones (moves) to play in each byo-yomi period (0 with a period: no time limit).
    pub stones: u32,
    /// Time added to the main time as each move starts (GGF's increment; GTP has none).
    pub increment: Duration,
}

impl TimeControl {
    /// `t` for every move and nothing more: a byo-yomi period of one stone.
    pub fn per_move(t: Duration) -> TimeControl {
        TimeControl { main: Duration::ZERO, byo_yomi: t, stones: 1, increment: Duration::ZERO }
    }

    /// Main time only: a game clock (and what GTP's `time_left` implies when no `time_settings` came).
    pub fn main_only(main: Duration) -> TimeControl {
        TimeControl { main, byo_yomi: Duration::ZERO, stones: 0, increment: Duration::ZERO }
    }

    /// Parses GGF's `TI` value, `MAIN[/INCREMENT[/EXTENSION]]`, each part `[[H:]M:]S`
    /// with seconds that may have a fraction (`15:00`, `30:00/00:05/02:00`,
    /// `0/0.250/0`). The extension is counted as main time; no main time and no
    /// extension with an increment is `increment` for every move
    /// ([`TimeControl::per_move`]), which is how a match states its time per move.
    pub fn parse_ggf(text: &str) -> Result<TimeControl, String> {
        let parts: Vec<&str> = text.split('/').collect();
        if parts.len() > 3 {
            return Err(format!("time control `{text}` has more than 3 parts (main/increment/extension)"));
        }
        let mut values = [Duration::ZERO; 3];
        for (value, part) in values.iter_mut().zip(&parts) {
            *value = parse_clock_time(part.trim()).map_err(|e| format!("time control `{text}`: {e}"))?;
        }
        let [main, increment, extension] = values;
        let main = main + extension;
        Ok(if main.is_zero() && !increment.is_zero() {
            TimeControl::per_move(increment)
        } else {
            TimeControl { main, byo_yomi: Duration::ZERO, stones: 0, increment }
        })
    }

    /// The control as GGF's `TI` value, read back by [`TimeControl::parse_ggf`]; `None`
    /// for a GTP byo-yomi that GGF cannot state (periods of several stones).
    pub(crate) fn to_ggf(self) -> Option<String> {
        if self.stones == 1 && self.main.is_zero() && self.increment.is_zero() {
            return Some(format!("0/{}/0", clock_time_text(self.byo_yomi)));
        }
        (self.byo_yomi.is_zero() && self.stones == 0)
            .then(|| format!("{}/{}/0", clock_time_text(self.main), clock_time_text(self.increment)))
    }

    /// True for GTP's "no time limits": a byo-yomi period with 0 stones
    /// (`time_settings 0 1 0`), or no time at all (`time_settings 0 0 0`).
    pub(crate) fn is_unlimited(&self) -> bool {
        (self.byo_yomi > Duration::ZERO && self.stones == 0)
            || (self.main.is_zero() && self.byo_yomi.is_zero() && self.increment.is_zero())
    }
}

/// Parses `[[H:]M:]S` (seconds may have a fraction) as a duration of at most a day.
fn parse_clock_time(text: &str) -> Result<Duration, String> {
    let fields: Vec<&str> = text.split(':').collect();
    if fields.len() > 3 || text.is_empty() {
        return Err(format!("`{text}` is not [[hours:]minutes:]seconds"));
    }
    let mut seconds = 0.0;
    for (i, field) in fields.iter().enumerate() {
        let last = i + 1 == fields.len();
        let value: f64 = field.parse().map_err(|_| format!("`{text}` is not [[hours:]minutes:]seconds"))?;
        if !value.is_finite() || value < 0.0 || (!last && value.fract() != 0.0) {
            return Err(format!("`{text}` is not [[hours:]minutes:]seconds"));
        }
        seconds = seconds * 60.0 + value;
    }
    if seconds > 86_400.0 {
        return Err(format!("`{text}` is more than a day"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// `M:SS` with milliseconds when they are not zero.
fn clock_time_text(d: Duration) -> String {
    let (minutes, seconds, millis) = (d.as_secs() / 60, d.as_secs() % 60, d.subsec_millis());
    if millis == 0 {
        format!("{minutes}:{seconds:02}")
    } else {
        format!("{minutes}:{seconds:02}.{millis:03}")
    }
}

/// One side's clock: what is left, as the engine measured it or as `time_left` said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Clock {
    control: TimeControl,
    /// Time left in the current period (main time, or the current byo-yomi period).
    left: Duration,
    /// Stones left to play in the current byo-yomi period (0 while in main time).
    stones_left: u32,
}

/// Kept back from every budget: the time around the search (protocol, process
/// scheduling) that the clock still counts.
const SAFETY: Duration = Duration::from_millis(30);

impl Clock {
    /// A fresh clock for a game under `control`.
    pub(crate) fn new(control: TimeControl) -> Clock {
        let (left, stones_left) =
            if control.main > Duration::ZERO { (control.main, 0) } else { (control.byo_yomi, control.stones) };
        Clock { control, left, stones_left }
    }

    /// The time controls.
    pub(crate) fn control(&self) -> TimeControl {
        self.control
    }

    /// Sets what is left, as GTP's `time_left` reports it (`stones` 0: main time).
    pub(crate) fn set_left(&mut self, left: Duration, stones: u32) {
        self.left = left;
        self.stones_left = stones;
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// Time left in the current period.
    pub(crate) fn left(&self) -> Duration {
        self.left
    }

    /// The main time a move may count on: what is left, less what is kept back.
    fn usable_main(&self) -> Duration {
        self.left.mul_f64(0.95).saturating_sub(SAFETY)
    }

    /// Counts a move that took `used`.
    pub(crate) fn spend(&mut self, used: Duration) {
        if self.stones_left > 0 {
            self.stones_left -= 1;
            self.left = self.left.saturating_sub(used);
            if self.stones_left == 0 {
                // A new period starts.
                self.left = self.control.byo_yomi;
                self.stones_left = self.control.stones;
            }
            return;
        }
        match (self.left + self.control.increment).checked_sub(used) {
            Some(left) if left > Duration::ZERO => self.left = left,
            _ => {
                // Main time is over: byo-yomi starts (or nothing is left).
                let over = used.saturating_sub(self.left);
                self.left = self.control.byo_yomi.saturating_sub(over);
                self.stones_left = self.control.stones;
            }
        }
    }

    /// The budget for the next move in a position with `empties` empty squares;
    /// `None` when there is no limit.
    ///
    /// In main time the time left is shared over the engine's remaining moves by
    /// phase, as tournament engines do: an opening move (usually the book's) weighs
    /// less than a midgame move, and the endgame (the last `ENDGAME_EMPTIES`: an
    /// exact solve, then moves from its table) keeps only a reserve. Once there, a
    /// move may aim at `ENDGAME_SOLVE_SHARE` of what is left, so that the exact
    /// threshold follows the time left. A move may run past its share (to finish what
    /// it started) up to `LIMIT_FACTOR` times it, and, outside the endgame, never past
    /// a quarter of what is left.
    pub(crate) fn budget(&self, empties: u32) -> Option<MoveBudget> {
        if self.control.is_unlimited() {
            return None;
        }
        if self.stones_left > 0 {
            let share = (self.left / self.stones_left).saturating_sub(SAFETY).mul_f64(0.9);
            if self.stones_left == 1 {
                // A period of one stone: the time is this move's and spending it all is free.
                return Some(MoveBudget { target: None, limit: share });
            }
            let limit = self.left.saturating_sub(SAFETY).mul_f64(0.9).min(share.mul_f64(LIMIT_FACTOR));
            return Some(MoveBudget { target: Some(share), limit });
        }
        // This move's increment is credited as it starts: it is the move's own.
        let main = self.usable_main();
        let increment = self.control.increment.mul_f64(0.9);
        let usable = main + increment;
        let weights: f64 = (1..=empties).rev().step_by(2).map(phase_weight).sum();
        let mut target = main.mul_f64(phase_weight(empties) / weights) + increment;
        if empties <= ENDGAME_EMPTIES {
            // What is left is the endgame's, and its first exact solve is the one costly
            // move in it (the later ones come from the solve's table): a target that
            // large lets the exact threshold follow the time left, not the reserve.
            target = target.max(main.mul_f64(ENDGAME_SOLVE_SHARE));
        }
        if self.control.byo_yomi > Duration::ZERO && self.control.stones > 0 {
            // Byo-yomi follows: a period's share per move can be spent on top.
            target += (self.control.byo_yomi / self.control.stones).mul_f64(0.5);
        }
        let limit = target.mul_f64(LIMIT_FACTOR).min(usable.mul_f64(0.25).max(target)).min(usable);
        Some(MoveBudget { target: Some(target.min(limit)), limit })
    }
}

/// How much of the game's time a move at `empties` empty squares deserves, relative
/// to a midgame move.
///
/// The endgame keeps only a reserve. In 4 s games its moves took 2–5 ms on average,
/// and with a weight of 0.1 each, 14–16% of the clock was left unspent at the end,
/// 23–24% with a book (which leaves fewer midgame moves to share the time). What a
/// midgame move leaves unused is shared again over the later moves, so the reserve
/// only has to cover a hard solve.
fn phase_weight(empties: u32) -> f64 {
    match empties {
        45.. => 0.7,
        e if e > ENDGAME_EMPTIES => 1.0,
        _ => ENDGAME_WEIGHT,
    }
}

/// From this many empties on, moves are the endgame's: an exact solve, then moves
/// played from its table.
///
/// Where the first exact result comes, not where the fixed exact threshold would
/// solve: in 4 s games the midgame's own iterations reached the end (and every later
/// move came from the table in a few milliseconds) at 18–25 empties, 22–25 in most, so
/// a boundary at 20 left the time meant for the moves at 22 and 24 unspent (17–19% of
/// the clock: `match --games-out` and `scripts/clock_use.py`).
const ENDGAME_EMPTIES: u32 = 24;

/// [`phase_weight`] of an endgame move.
const ENDGAME_WEIGHT: f64 = 0.03;

/// The share of the time left an endgame move may aim at (for its exact solve).
const ENDGAME_SOLVE_SHARE: f64 = 0.4;

/// How far past its share a move may run at most.
const LIMIT_FACTOR: f64 = 2.5;

/// A move's time from a clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MoveBudget {
    /// What the move should take: no search iteration starts after half of it
    /// (`None`: all of `limit` is the move's, as under a per-move control).
    pub(crate) target: Option<Duration>,
    /// What it may take at most.
    pub(crate) limit: Duration,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_spread_the_time_and_never_exceed_it() {
        let control = TimeControl::main_only(Duration::from_secs(60));
        let mut clock = Clock::new(control);
        let first = clock.budget(60).unwrap();
        let target = first.target.unwrap();
        assert!(target > Duration::from_secs(1) && target < Duration::from_secs(5), "{first:?}");
        assert!(first.limit >= target && first.limit <= Duration::from_secs(15), "{first:?}");
        // Over a game whose moves take their targets, a midgame move (up to the solve)
        // gets more than an opening move or one after the solve.
        let mut game = Clock::new(control);
        let mut by_phase = [(0.0, 0); 3];
        for empties in (1..=60).rev().step_by(2) {
            let t = game.budget(empties).unwrap().target.unwrap();
            let phase = match empties {
                45.. => 0,
                e if e > ENDGAME_EMPTIES => 1,
                _ => 2,
            };
            by_phase[phase].0 += t.as_secs_f64();
            by_phase[phase].1 += 1;
            game.spend(t);
        }
        let [opening, midgame, end] = by_phase.map(|(sum, n)| sum / f64::from(n));
        assert!(midgame > opening * 1.2 && midgame > end * 3.0, "{by_phase:?}");
        // Spending every move's whole limit never runs the clock out.
        let mut total = Duration::ZERO;
        for empties in (1..=60).rev().step_by(2) {
            let b = clock.budget(empties).unwrap();
            assert!(b.limit < clock.left(), "{b:?} >= {:?}", clock.left());
            assert!(b.target.unwrap() <= b.limit, "{b:?}");
            clock.spend(b.limit);
            total += b.limit;
        }
        assert!(total < Duration::from_secs(60), "{total:?}");
        let byo = TimeControl {
            main: Duration::ZERO,
            byo_yomi: Duration::from_secs(10),
            stones: 5,
            increment: Duration::ZERO,
        };
        let mut clock = Clock::new(byo);
        let share = (Duration::from_secs(2) - SAFETY).mul_f64(0.9);
        assert_eq!(clock.budget(40).unwrap().target, Some(share));
        assert!(clock.budget(40).unwrap().limit > share);
        for _ in 0..5 {
            clock.spend(Duration::from_secs(1));
        }
        assert_eq!(clock.left(), Duration::from_secs(10), "a new period starts");
        let unlimited = TimeControl {
            main: Duration::ZERO,
            byo_yomi: Duration::from_secs(1),
            stones: 0,
            increment: Duration::ZERO,
        };
        assert_eq!(Clock::new(unlimited).budget(30), None);
    }

    #[test]
    fn the_endgame_reserve_leaves_little_of_the_clock_unspent() {
        // As measured in 4 s games: moves stop at 3/4 of their targets (no iteration
        // starts after half of one) until the search reaches the end at 24 empties
        // in half of its target; later moves take 3 ms from its table. The clock is
        // spent, from the first move or from a book's last move at 30 empties. With
        // the endgame from 20 empties, 22% and 44% of it was left.
        // Where the search reached the end, as measured (not the clock's boundary).
        const SOLVED_AT: u32 = 24;
        let control = TimeControl::main_only(Duration::from_secs(4));
        for (from, at_least) in [(50, 0.9), (30, 0.75)] {
            let mut clock = Clock::new(control);
            for empties in (1..=from).rev().step_by(2) {
                let b = clock.budget(empties).unwrap();
                let target = b.target.unwrap();
                if empties <= ENDGAME_EMPTIES {
                    // The endgame aims at a share of what is left for its solve.
                    let usable = clock.usable_main();
                    assert!(target >= usable.mul_f64(ENDGAME_SOLVE_SHARE), "{empties}: {b:?}");
                    assert!(b.limit <= usable, "{empties}: {b:?}");
                }
                clock.spend(match empties {
                    e if e > SOLVED_AT => target.mul_f64(0.75),
                    SOLVED_AT => target / 2,
                    _ => Duration::from_millis(3).min(b.limit),
                });
            }
            let used = 1.0 - clock.left().as_secs_f64() / 4.0;
            assert!(used >= at_least, "from {from} empties: {used:.3} of the clock used");
        }
        // What the endgame's aim is for: with 0.4 s left at 18 empties (as in those
        // games), the reserve alone would aim at 39 ms, which solves from 14 empties;
        // the aim at a share of what is left solves the next move, at 16.
        let mut clock = Clock::new(control);
        clock.set_left(Duration::from_millis(400), 0);
        let target = clock.budget(18).unwrap().target.unwrap();
        assert!(crate::search::Strength::exact_at_for_time(target) >= 16, "{target:?}");
        // The reserve's own share: 18, 16, …, 2 empties weigh the same, a ninth each.
        let reserve = clock.usable_main() / 9;
        assert!(crate::search::Strength::exact_at_for_time(reserve) < 16, "{reserve:?}");
    }

    #[test]
    fn ggf_time_controls_parse_and_round_trip() {
        let secs = Duration::from_secs;
        assert_eq!(TimeControl::parse_ggf("15:00").unwrap(), TimeControl::main_only(secs(900)));
        let c = TimeControl::parse_ggf("30:00/00:05/02:00").unwrap();
        assert_eq!((c.main, c.increment, c.stones), (secs(1920), secs(5), 0));
        assert_eq!(TimeControl::parse_ggf("1:00:00").unwrap().main, secs(3600));
        let per_move = TimeControl::parse_ggf("0/0.25/0").unwrap();
        assert_eq!(per_move, TimeControl::per_move(Duration::from_millis(250)));
        for c in [per_move, c, TimeControl::main_only(Duration::from_millis(60_500))] {
            assert_eq!(TimeControl::parse_ggf(&c.to_ggf().unwrap()).unwrap(), c);
        }
        let byo = TimeControl { main: secs(60), byo_yomi: secs(10), stones: 5, increment: Duration::ZERO };
        assert_eq!(byo.to_ggf(), None);
        for bad in ["", "abc", "1:2:3:4", "0/1/2/3", "-5", "1.5:00", "inf", "NaN", "99999999"] {
            assert!(TimeControl::parse_ggf(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_per_move_control_gives_the_same_budget_from_gtp_and_ggf() {
        let t = Duration::from_millis(200);
        let gtp = TimeControl { main: Duration::ZERO, byo_yomi: t, stones: 1, increment: Duration::ZERO };
        let ggf = TimeControl::parse_ggf(&TimeControl::per_move(t).to_ggf().unwrap()).unwrap();
        let (mut a, mut b) = (Clock::new(gtp), Clock::new(ggf));
        for empties in (10..=58).rev().step_by(2) {
            assert_eq!(a.budget(empties), b.budget(empties));
            a.spend(Duration::from_millis(150));
            b.spend(Duration::from_millis(150));
        }
    }

    #[test]
    fn an_increment_is_credited_as_each_move_starts() {
        let control = TimeControl {
            main: Duration::from_secs(10),
            increment: Duration::from_secs(2),
            ..TimeControl::main_only(Duration::ZERO)
        };
        let mut clock = Clock::new(control);
        let first = clock.budget(50).unwrap().target.unwrap();
        assert!(first > Duration::from_secs(2) && first < Duration::from_secs(4), "{first:?}");
        clock.spend(Duration::from_secs(3));
        assert_eq!(clock.left(), Duration::from_secs(9));
        // With the main time gone, the increment alone is spent, never more than it.
        clock.spend(Duration::from_secs(11));
        assert!(clock.budget(30).unwrap().limit <= Duration::from_secs(2));
    }
}
