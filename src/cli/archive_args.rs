//! Which archives a command reads and which of their games it takes: `ArchiveArgs`
//! (the files, `--strict`, `--lenient`) and `GameSampleArgs` (`--every`, `--offset`,
//! `--shuffle-seed`), shared by every command that reads games.

use std::path::PathBuf;

use clap::Args;

use crate::thor::{bundled_sources, expand_paths, LoadOptions, Source, ThorDatabase};
use crate::train::positions::TrainGame;

/// Archives to load and how strictly.
#[derive(Args, Debug, Clone, Default)]
pub struct ArchiveArgs {
    /// Game archives or directories of them: WTHOR (.wtb with .JOU/.TRN), GGF (GGS's
    /// archives, .bz2 or .gz too), transcripts, JSON lines; recognised by content
    /// (default: the WTHOR archives bundled in the binary, 2013–2015).
    pub paths: Vec<PathBuf>,
    /// Fail on the first damaged file or game instead of skipping it with a warning.
    #[arg(long, conflicts_with = "lenient")]
    pub strict: bool,
    /// Exit 0 when damaged files or games were skipped (by default the command
    /// finishes its output, then exits 1).
    #[arg(long)]
    pub lenient: bool,
}

/// Damaged games or files skipped by this run without --lenient: the command finishes,
/// then exits 1 ([`super::run`] reads it).
pub(super) static SKIPPED_DAMAGED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl ArchiveArgs {
    /// The files' bytes, and an `Io` anomaly for each file that cannot be read (the
    /// others are still loaded; with --strict the first is an error).
    pub(super) fn sources(&self) -> anyhow::Result<(Vec<Source>, Vec<crate::thor::Anomaly>)> {
        if self.paths.is_empty() {
            return Ok((bundled_sources(), Vec::new()));
        }
        let mut sources = Vec::new();
        let mut unreadable = Vec::new();
        for p in expand_paths(&self.paths)? {
            match Source::open(&p) {
                Ok(s) => sources.push(s),
                Err(a) if self.strict => return Err(a.into()),
                Err(a) => unreadable.push(a),
            }
        }
        Ok((sources, unreadable))
    }

    /// Loads the archives, warning about (or with --strict failing on) damaged data or
    /// unreadable files; an error when nothing valid could be read at all.
    pub fn load(&self, index: bool) -> anyhow::Result<ThorDatabase> {
        let (sources, unreadable) = self.sources()?;
        let mut db = ThorDatabase::load(&sources, LoadOptions { strict: self.strict, index })?;
        db.anomalies.splice(0..0, unreadable);
        warn_skipped(&db);
        if !self.lenient {
            SKIPPED_DAMAGED.fetch_add(db.anomalies.len(), std::sync::atomic::Ordering::Relaxed);
        }
        let nothing = db.games.is_empty() && db.players.is_empty() && db.tournaments.is_empty();
        if nothing && !db.anomalies.is_empty() {
            anyhow::bail!(
                "nothing valid was read from {} ({} anomalies: `thorbook thor check` lists them)",
                self.paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "),
                db.anomalies.len()
            );
        }
        Ok(db)
    }
}

fn warn_skipped(db: &ThorDatabase) {
    if db.anomalies.is_empty() {
        return;
    }
    for a in db.anomalies.iter().take(5) {
        eprintln!("warning: skipped: {a}");
    }
    if db.anomalies.len() > 5 {
        eprintln!("warning: … and {} more", db.anomalies.len() - 5);
    }
    eprintln!(
        "warning: {} anomalies; the damaged games or files were skipped (`thorbook thor check` lists them, --strict fails at once, --lenient exits 0)",
        db.anomalies.len()
    );
}

/// Which of the loaded games a measurement or a solve takes: `--every N --offset K`,
/// games K, K + N, K + 2N… in the order loaded, or in a seeded shuffle of it with
/// `--shuffle-seed`. The same flags in `eval-error`, `labels solve` and `train`, so that
/// a store solved for one sample is the one measured.
#[derive(Args, Debug, Clone, Copy)]
pub(super) struct GameSampleArgs {
    /// Every Nth game only (a quicker estimate).
    #[arg(long, default_value_t = 1)]
    every: usize,
    /// With --every N, start at game K (0..N): samples with different offsets share no
    /// game, so a second sample is independent of the first.
    #[arg(long, default_value_t = 0)]
    offset: usize,
    /// Shuffle the games with this seed before --every and --offset take theirs: a
    /// sample free of the archives' order (years, tournaments, rounds), the same for
    /// the same seed, and the offsets of one seed still share no game.
    #[arg(long, value_name = "SEED")]
    shuffle_seed: Option<u64>,
}

impl GameSampleArgs {
    /// A usage error for an --every of 0 or an --offset not below it (checked before
    /// any work, and by [`GameSampleArgs::pick`]).
    pub(super) fn validate(&self) -> anyhow::Result<()> {
        let (every, offset) = (self.every, self.offset);
        if every == 0 {
            return Err(crate::cli::flags::usage("--every must be >= 1"));
        }
        if offset >= every {
            return Err(crate::cli::flags::usage(format!("--offset must be below --every ({every}), got {offset}")));
        }
        Ok(())
    }

    /// The games of the sample.
    pub(super) fn pick<T>(&self, mut games: Vec<T>) -> anyhow::Result<Vec<T>> {
        self.validate()?;
        if let Some(seed) = self.shuffle_seed {
            // Fisher–Yates, from the last game down.
            let mut draws = crate::rng::Draws(seed);
            for i in (1..games.len()).rev() {
                // A draw below a length always fits a usize.
                let j = usize::try_from(draws.below(i as u64 + 1)).unwrap_or(i);
                games.swap(i, j);
            }
        }
        Ok(games.into_iter().skip(self.offset).step_by(self.every).collect())
    }
}

/// `--tournament-weight NAME=W`: the games of tournaments whose name contains `name`
/// (lowercased) weigh `weight`.
#[derive(Clone, Debug)]
pub(super) struct TournamentWeight {
    name: String,
    weight: f32,
}

pub(super) fn load_games(archives: &ArchiveArgs) -> anyhow::Result<Vec<TrainGame>> {
    load_weighted_games(archives, &[])
}

/// The games of `archives` that carry a theoretical score, each weighing what the
/// first of `rules` its tournament matches says (1 when none does); how many games
/// each rule weighed is said on stderr, and a rule that matches no game is an error
/// (a misspelt name would otherwise train unweighted without a word).
pub(super) fn load_weighted_games(
    archives: &ArchiveArgs,
    rules: &[TournamentWeight],
) -> anyhow::Result<Vec<TrainGame>> {
    let db = archives.load(false)?;
    let mut matched = vec![0usize; rules.len()];
    let games: Vec<TrainGame> = db
        .games
        .iter()
        .filter_map(|g| {
            let mut game = TrainGame::from_thor(g)?;
            if !rules.is_empty() {
                let tournament = db.tournament_name(g).to_lowercase();
                if let Some(i) = rules.iter().position(|r| tournament.contains(&r.name)) {
                    game.weight = rules[i].weight;
                    matched[i] += 1;
                }
            }
            Some(game)
        })
        .collect();
    for (rule, n) in rules.iter().zip(&matched) {
        if *n == 0 {
            // WTHOR archives name their tournaments only with WTHOR.TRN beside them.
            let hint =
                if db.tournaments().is_empty() { " (no tournament names: give WTHOR.TRN among the paths)" } else { "" };
            return Err(crate::cli::flags::usage(format!(
                "--tournament-weight {}={}: no game's tournament contains `{}`{hint}",
                rule.name, rule.weight, rule.name
            )));
        }
        eprintln!("{n} games of tournaments containing `{}` weigh {}", rule.name, rule.weight);
    }
    let left_out = db.games.len() - games.len();
    if left_out > 0 {
        eprintln!(
            "note: {left_out} of {} games have no theoretical score at 24 empties (only WTHOR archives carry one): \
             training labels positions with it, so they are left out",
            db.games.len()
        );
    }
    if games.is_empty() && left_out > 0 {
        anyhow::bail!("no game to train on: none has a theoretical score at 24 empties");
    }
    Ok(games)
}

pub(super) fn parse_tournament_weight(s: &str) -> Result<TournamentWeight, String> {
    let (name, weight) = s.rsplit_once('=').ok_or_else(|| format!("expected NAME=W, got `{s}`"))?;
    if name.trim().is_empty() {
        return Err(format!("no tournament name before `=` in `{s}`"));
    }
    let weight: f32 = weight.trim().parse().map_err(|_| format!("the weight in `{s}` is not a number"))?;
    if !(0.01..=100.0).contains(&weight) {
        return Err(format!("the weight in `{s}` must be from 0.01 to 100"));
    }
    Ok(TournamentWeight { name: name.trim().to_lowercase(), weight })
}
