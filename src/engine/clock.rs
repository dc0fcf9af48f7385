//! Time management for games under a clock: GTP's `time_settings` (main time, then
//! byo-yomi periods of some stones) and `time_left`, turned into a budget per move.
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
}

impl TimeControl {
    /// True for GTP's "no time limits": a byo-yomi period with 0 stones
    /// (`time_settings 0 1 0`), or no time at all (`time_settings 0 0 0`).
    pub fn is_unlimited(&self) -> bool {
        (self.byo_yomi > Duration::ZERO && self.stones == 0) || (self.main.is_zero() && self.byo_yomi.is_zero())
    }
}

/// One side's clock: what is left, as the engine measured it or as `time_left` said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
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
    pub fn new(control: TimeControl) -> Clock {
        let (left, stones_left) =
            if control.main > Duration::ZERO { (control.main, 0) } else { (control.byo_yomi, control.stones) };
        Clock { control, left, stones_left }
    }

    /// The time controls.
    pub fn control(&self) -> TimeControl {
        self.control
    }

    /// Sets what is left, as GTP's `time_left` reports it (`stones` 0: main time).
    pub fn set_left(&mut self, left: Duration, stones: u32) {
        self.left = left;
        self.stones_left = stones;
    }

    /// Time left in the current period.
    pub fn left(&self) -> Duration {
        self.left
    }

    /// Counts a move that took `used`.
    pub fn spend(&mut self, used: Duration) {
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
        match self.left.checked_sub(used) {
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
    pub fn budget(&self, empties: u32) -> Option<Duration> {
        if self.control.is_unlimited() {
            return None;
        }
        if self.stones_left > 0 {
            let share = self.left / self.stones_left;
            return Some(share.saturating_sub(SAFETY).mul_f64(0.9));
        }
        // The engine's own moves left, but the last dozen empties solve quickly: spread
        // the time over the moves before them, and keep some for those.
        let own_moves = (empties.saturating_sub(10) / 2).max(1) + 2;
        let usable = self.left.mul_f64(0.95).saturating_sub(SAFETY);
        let mut budget = usable / own_moves;
        if self.control.byo_yomi > Duration::ZERO && self.control.stones > 0 {
            // Byo-yomi follows: a period's share per move can be spent on top.
            budget += (self.control.byo_yomi / self.control.stones).mul_f64(0.5);
        }
        Some(budget.min(usable))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_spread_the_time_and_never_exceed_it() {
        let control = TimeControl { main: Duration::from_secs(60), byo_yomi: Duration::ZERO, stones: 0 };
        let mut clock = Clock::new(control);
        let first = clock.budget(60).unwrap();
        assert!(first > Duration::from_secs(1) && first < Duration::from_secs(5), "{first:?}");
        let mut total = Duration::ZERO;
        for empties in (1..=60).rev().step_by(2) {
            let b = clock.budget(empties).unwrap();
            assert!(b <= clock.left(), "{b:?} > {:?}", clock.left());
            clock.spend(b);
            total += b;
        }
        assert!(total <= Duration::from_secs(60), "{total:?}");
        let byo = TimeControl { main: Duration::ZERO, byo_yomi: Duration::from_secs(10), stones: 5 };
        let mut clock = Clock::new(byo);
        assert_eq!(clock.budget(40).unwrap(), (Duration::from_secs(2) - SAFETY).mul_f64(0.9));
        for _ in 0..5 {
            clock.spend(Duration::from_secs(1));
        }
        assert_eq!(clock.left(), Duration::from_secs(10), "a new period starts");
        let unlimited = TimeControl { main: Duration::ZERO, byo_yomi: Duration::from_secs(1), stones: 0 };
        assert_eq!(Clock::new(unlimited).budget(30), None);
    }
}
