//! Progress of long commands: indicatif's bar on a terminal, and on a log — a batch
//! job's output file, `nohup`, a pipe — where the bar draws nothing, a plain line when
//! a stage ends and at most every [`LOG_EVERY`] between, so that a run on a cluster
//! says how far it got and how long it has left.

use crate::train::Progress;
use std::borrow::Cow;
use std::io::Write;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// How often a log gets a line while a stage runs: often enough to see a job is alive
/// and how fast it goes, seldom enough that a day's run writes a few thousand lines.
pub(super) const LOG_EVERY: Duration = Duration::from_secs(30);

/// A progress display: the bar, and the log lines when stderr is not a terminal.
pub(super) struct Meter {
    bar: ProgressBar,
    /// Names the lines when no prefix is set (`scoring`, `self-play`).
    name: &'static str,
    /// What is counted (`positions`), or empty.
    unit: &'static str,
    log: Option<Mutex<Log>>,
}

struct Log {
    out: Box<dyn Write + Send>,
    every: Duration,
    last_line: Instant,
    /// The stage being counted: its label and length, where and when its count began.
    stage: (String, u64),
    first_done: u64,
    started: Instant,
    last_done: u64,
    /// The stage's end was written: a repeated final count is not written again, and a
    /// count below the total after it starts the next stage.
    ended: bool,
}

impl Meter {
    /// A meter of `unit`s (or of nothing named: empty) whose bar and lines begin with
    /// `name` and the prefix (the prefix alone when `name` is empty); lines on stderr
    /// every [`LOG_EVERY`] if it is not a terminal.
    pub(super) fn new(name: &'static str, unit: &'static str) -> Meter {
        let logged = !std::io::IsTerminal::is_terminal(&std::io::stderr());
        let log = logged.then(|| Box::new(std::io::stderr()) as Box<dyn Write + Send>);
        Meter::with_log(name, unit, log, LOG_EVERY)
    }

    /// A meter whose lines go to `log` (none: the bar only) at most every `every`.
    fn with_log(name: &'static str, unit: &'static str, log: Option<Box<dyn Write + Send>>, every: Duration) -> Meter {
        // The bar says what a line says: its prefix is the whole label (name and stage)
        // and its unit the line's.
        let head = if name.is_empty() { "{prefix:>16}" } else { "{prefix}" };
        let unit_part = if unit.is_empty() { String::new() } else { format!(" {unit}") };
        let template = format!("{head} {{bar:40}} {{pos}}/{{len}}{unit_part}, {{per_sec}}, ETA {{eta}} {{msg}}");
        let bar = ProgressBar::new(0).with_style(ProgressStyle::with_template(&template).expect("valid template"));
        bar.set_prefix(name);
        let now = Instant::now();
        let log = log.map(|out| {
            Mutex::new(Log {
                out,
                every,
                last_line: now,
                stage: (String::new(), 0),
                first_done: 0,
                started: now,
                last_done: 0,
                ended: false,
            })
        });
        Meter { bar, name, unit, log }
    }

    /// Names the stage (`round 3`, `exact solves`); a new name starts a new count.
    pub(super) fn set_prefix(&self, prefix: impl Into<Cow<'static, str>>) {
        let prefix = prefix.into();
        let label = if prefix.is_empty() {
            Cow::Borrowed(self.name)
        } else if self.name.is_empty() || prefix.starts_with(self.name) {
            prefix
        } else {
            Cow::Owned(format!("{} {prefix}", self.name))
        };
        self.bar.set_prefix(label);
    }

    /// Says more about the stage, after the count.
    pub(super) fn set_message(&self, message: impl Into<Cow<'static, str>>) {
        self.bar.set_message(message);
    }

    /// `done` of `total` counted. A new prefix, a new total or a count after the stage
    /// ended starts a new stage, whose rate counts from its first update. Within a
    /// stage a count below the last one is a report overtaken by a later one (workers
    /// report in parallel): it writes nothing.
    pub(super) fn update(&self, done: u64, total: u64) {
        self.bar.set_length(total);
        self.bar.set_position(done);
        let Some(log) = &self.log else { return };
        let mut log = log.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let label = self.label();
        let end = done >= total;
        if log.stage.0 != label || log.stage.1 != total || (log.ended && !end) {
            log.stage = (label.clone(), total);
            log.first_done = done;
            log.started = now;
            log.ended = false;
        } else if done < log.last_done {
            return;
        }
        log.last_done = done;
        let due = now.duration_since(log.last_line) >= log.every;
        if (end && !log.ended) || (!end && due) {
            log.last_line = now;
            log.ended = end;
            let line = self.line(&label, done, total, done - log.first_done, now.duration_since(log.started));
            // A log that cannot be written loses a progress line, never the work.
            let _ = writeln!(log.out, "{line}");
            let _ = log.out.flush();
        }
    }

    /// Shows the bar at zero (a stage announced before its first count).
    pub(super) fn reset(&self) {
        self.bar.set_position(0);
    }

    /// Runs `f` (which prints) with the bar out of its way.
    pub(super) fn suspend<F: FnOnce() -> R, R>(&self, f: F) -> R {
        self.bar.suspend(f)
    }

    /// Removes the bar.
    pub(super) fn finish(&self) {
        self.bar.finish_and_clear();
    }

    /// The meter's name and the stage's prefix, as the bar shows them.
    fn label(&self) -> String {
        self.bar.prefix()
    }

    /// `scoring: 1200/5000 positions (24.0%), 41.3/s, ETA 1m 32s (...)`; the rate and
    /// the time left are from `counted` units in `elapsed`.
    fn line(&self, label: &str, done: u64, total: u64, counted: u64, elapsed: Duration) -> String {
        let mut line = format!("{label}: {done}/{total}");
        if !self.unit.is_empty() {
            line.push(' ');
            line.push_str(self.unit);
        }
        if total > 0 {
            line.push_str(&format!(" ({:.1}%)", 100.0 * done.min(total) as f64 / total as f64));
        }
        let secs = elapsed.as_secs_f64();
        if done >= total {
            line.push_str(&format!(", done in {}", clock(secs)));
        } else if counted > 0 && secs > 0.0 {
            let rate = counted as f64 / secs;
            let rate = if rate >= 100.0 { format!("{rate:.0}") } else { format!("{rate:.1}") };
            let left = (total - done) as f64 * secs / counted as f64;
            line.push_str(&format!(", {rate}/s, ETA {}", clock(left)));
        }
        let message = self.bar.message();
        if !message.is_empty() {
            line.push(' ');
            line.push_str(&message);
        }
        line
    }
}

/// `7s`, `4m 05s`, `3h 12m`: to the unit that matters for a wait of that length.
fn clock(secs: f64) -> String {
    // Saturating on purpose: an absurd estimate (a rate near zero) prints large and a
    // negative one as zero, never wraps.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let s = secs.round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, s % 3600 / 60),
    }
}

/// A progress meter labelled by the library's stage names.
pub(super) fn bar() -> Meter {
    Meter::new("", "")
}

pub(super) fn progress_to(bar: &Meter) -> impl Fn(Progress) + Sync + '_ {
    move |p: Progress| {
        bar.set_prefix(p.stage.label());
        bar.update(p.done, p.total);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A log that tests read back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Shared {
        fn lines(&self) -> Vec<String> {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap().lines().map(str::to_string).collect()
        }
    }

    /// The rate and the time left of a line written mid-stage.
    fn rate_and_eta(line: &str) -> (f64, String) {
        let rest = line.split_once("%), ").expect(line).1;
        let (rate, eta) = rest.split_once("/s, ETA ").expect(line);
        (rate.parse().expect(line), eta.to_string())
    }

    fn meter(every: Duration) -> (Meter, Shared) {
        let log = Shared::default();
        let m = Meter::with_log("scoring", "positions", Some(Box::new(log.clone())), every);
        (m, log)
    }

    #[test]
    fn a_stage_that_ends_before_the_interval_writes_one_line() {
        let (m, log) = meter(Duration::from_secs(3600));
        for done in 0..=50 {
            m.update(done, 50);
        }
        // The final count reported twice (a library's last event and a summary) is one line.
        m.update(50, 50);
        let lines = log.lines();
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].starts_with("scoring: 50/50 positions (100.0%), done in "), "{lines:?}");
    }

    #[test]
    fn lines_between_come_when_due_with_rate_and_time_left() {
        let (m, log) = meter(Duration::ZERO);
        m.update(10, 100);
        std::thread::sleep(Duration::from_millis(20));
        m.update(30, 100);
        let lines = log.lines();
        assert_eq!(lines.len(), 2, "{lines:?}");
        // The first update opens the stage: nothing counted yet, so no rate.
        assert_eq!(lines[0], "scoring: 10/100 positions (10.0%)");
        // 20 counted in >= 20 ms: at most 1000/s, and the 70 left take at least 70 ms.
        assert!(lines[1].starts_with("scoring: 30/100 positions (30.0%), "), "{lines:?}");
        let (rate, eta) = rate_and_eta(&lines[1]);
        assert!(rate > 0.0 && rate <= 1000.0, "{lines:?}");
        assert!(eta.ends_with('s'), "{lines:?}");
    }

    #[test]
    fn a_new_prefix_or_a_count_that_goes_back_is_a_new_stage() {
        let (m, log) = meter(Duration::from_secs(3600));
        m.set_prefix("round 1");
        m.update(0, 4);
        m.update(4, 4);
        m.set_prefix("round 2");
        m.set_message("(9 leaves)");
        m.update(0, 4);
        m.update(4, 4);
        // The same prefix counting again from zero (a library's second pass) ends again.
        m.update(0, 4);
        m.update(4, 4);
        let lines = log.lines();
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(lines[0].starts_with("scoring round 1: 4/4 positions (100.0%), done in "), "{lines:?}");
        assert!(lines[1].starts_with("scoring round 2: 4/4") && lines[1].ends_with("s (9 leaves)"), "{lines:?}");
        assert!(lines[2].starts_with("scoring round 2: 4/4"), "{lines:?}");
    }

    #[test]
    fn a_report_overtaken_within_a_stage_does_not_restart_it() {
        let (m, log) = meter(Duration::ZERO);
        m.update(10, 100);
        std::thread::sleep(Duration::from_millis(20));
        m.update(40, 100);
        // A worker's earlier count arriving late: no line, and the stage goes on.
        m.update(20, 100);
        m.update(100, 100);
        // Had the late count opened a new stage, it would have written a line of its own.
        let lines = log.lines();
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(lines[1].starts_with("scoring: 40/100 "), "{lines:?}");
        assert!(lines[2].starts_with("scoring: 100/100 positions (100.0%), done in "), "{lines:?}");
    }

    #[test]
    fn a_resumed_count_rates_only_what_this_run_did() {
        let (m, log) = meter(Duration::ZERO);
        // 1,000,000 were done by an earlier run: a rate over them would be absurd.
        m.update(1_000_000, 2_000_000);
        std::thread::sleep(Duration::from_millis(20));
        m.update(1_000_010, 2_000_000);
        let lines = log.lines();
        assert!(rate_and_eta(&lines[1]).0 <= 500.0, "{lines:?}");
    }

    #[test]
    fn a_prefix_that_already_names_the_meter_is_not_repeated() {
        let (m, log) = meter(Duration::from_secs(3600));
        m.set_prefix("scoring again");
        m.update(1, 1);
        assert!(log.lines()[0].starts_with("scoring again: 1/1"), "{:?}", log.lines());
    }

    #[test]
    fn without_a_log_only_the_bar_moves() {
        let m = Meter::with_log("x", "", None, Duration::ZERO);
        m.update(3, 3);
        assert_eq!(m.bar.position(), 3);
    }

    #[test]
    fn clock_keeps_the_units_that_matter() {
        assert_eq!(clock(0.4), "0s");
        assert_eq!(clock(59.4), "59s");
        assert_eq!(clock(65.0), "1m 05s");
        assert_eq!(clock(f64::from(3 * 3600 + 12 * 60 + 59)), "3h 12m");
        assert_eq!(clock(f64::INFINITY), format!("{}h {:02}m", u64::MAX / 3600, u64::MAX % 3600 / 60));
    }
}
