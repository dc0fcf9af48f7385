//! `plan.json`: what a plan records (every setting, its inputs' identity, its kind),
//! the digests that tie a plan's files together, and the names of a plan directory's
//! files that more than one kind of plan reads. (Below the plan kinds: `checks` and
//! `rounds` use it, it uses neither.)

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::{PlanError, PlanFault};
use crate::book::build::checkpoint::{build_identity_bytes, BuildIdentity};
use crate::book::build::LeafSpec;
use crate::book::check::audit::ChecksKind;
use crate::book::grow::Growth;
use crate::book::BackUpRule;
use crate::eval::EvalSource;
use crate::fileio::Digest;
use crate::search::{Selectivity, Strength};
use std::time::Duration;

/// The input book copied into a rounds directory.
pub(super) const INPUT_FILE: &str = "input.tbk";

/// The directory of round `number` in a rounds directory.
pub(super) fn round_dir(rounds_dir: &Path, number: u32) -> PathBuf {
    rounds_dir.join(format!("round-{number:04}"))
}

/// Whether `dir` holds a growth's rounds (its input book or its first round).
pub(super) fn holds_growth(dir: &Path) -> bool {
    dir.join(INPUT_FILE).exists() || round_dir(dir, 1).exists()
}

/// The part of `plan.json` a checks plan adds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct ChecksFile {
    /// Whose searches: an audit's or a fix's.
    pub(super) run: ChecksKind,
    /// The identity of the run's log.
    pub(super) identity: String,
}

/// The format `plan.json` names. Format 1 plans (digests of two CRC-32s, the planning
/// host's thread count) are refused: plan again.
pub(super) const PLAN_FORMAT: &str = "thorbook plan 3";

/// What a plan computes, as `plan.json` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum PlanKind {
    /// The leaves of a build.
    Build,
    /// One round of a growth.
    Round,
    /// The whole-position searches of an audit or a fix.
    Checks,
}

/// The evaluation as the plan names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum EvalName {
    Bundled,
    Classic,
    File(PathBuf),
}

impl EvalName {
    pub(super) fn of(source: &EvalSource) -> EvalName {
        match source {
            EvalSource::Bundled => EvalName::Bundled,
            EvalSource::Classic => EvalName::Classic,
            EvalSource::File(p) => EvalName::File(std::path::absolute(p).unwrap_or_else(|_| p.clone())),
        }
    }

    /// The evaluation as messages name it.
    pub(super) fn describe(&self) -> String {
        match self {
            EvalName::Bundled => "bundled with thorbook".into(),
            EvalName::Classic => "classic".into(),
            EvalName::File(p) => p.display().to_string(),
        }
    }

    pub(super) fn source(&self) -> EvalSource {
        match self {
            EvalName::Bundled => EvalSource::Bundled,
            EvalName::Classic => EvalSource::Classic,
            EvalName::File(p) => EvalSource::File(p.clone()),
        }
    }
}

/// `plan.json`: readable, and everything a shard needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct PlanFile {
    pub(super) format: String,
    pub(super) kind: PlanKind,
    pub(super) shards: u32,
    pub(super) output: PathBuf,
    pub(super) max_ply: u32,
    pub(super) min_games: u32,
    pub(super) depth: Option<u32>,
    pub(super) exact_at: Option<u32>,
    pub(super) selectivity_tenths: u8,
    pub(super) time_nanos: Option<u64>,
    pub(super) nodes: Option<u64>,
    pub(super) hash_mib: usize,
    pub(super) eval: EvalName,
    pub(super) eval_digest: String,
    pub(super) games: usize,
    pub(super) games_digest: String,
    pub(super) positions: usize,
    pub(super) positions_digest: String,
    pub(super) digest: String,
    /// How the assembly backs values up (plans made before the rule was recorded:
    /// negamax).
    #[serde(default, skip_serializing_if = "is_negamax")]
    pub(super) back_up: BackUpRule,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) round: Option<RoundFile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) checks: Option<ChecksFile>,
    /// A build's positions in each shard, so that reporting on a plan needs no more
    /// than this file (plans made before: empty, and the positions file is read).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) shard_positions: Vec<u64>,
}

impl PlanFile {
    /// A plan of `kind` whose `positions` (with their digest) are searched by
    /// `search` with the evaluation `eval`: the fields every kind fills alike; the
    /// rest are a build's defaults for the kind to override.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn searched(
        kind: PlanKind,
        shards: u32,
        output: PathBuf,
        search: &LeafSpec,
        eval: &EvalSource,
        positions: usize,
        positions_digest: u64,
        digest: u64,
    ) -> PlanFile {
        let s = search.strength;
        PlanFile {
            format: PLAN_FORMAT.into(),
            kind,
            shards,
            output,
            max_ply: 0,
            min_games: 0,
            depth: s.depth,
            exact_at: s.exact_at,
            selectivity_tenths: search.selectivity_tenths(),
            time_nanos: s.time.map(|t| u64::try_from(t.as_nanos()).unwrap_or(u64::MAX)),
            nodes: s.nodes,
            hash_mib: search.hash_mib,
            eval: EvalName::of(eval),
            eval_digest: format!("{:08x}", search.eval_digest),
            games: 0,
            games_digest: String::new(),
            positions,
            positions_digest: hex(positions_digest),
            digest: hex(digest),
            back_up: BackUpRule::default(),
            round: None,
            checks: None,
            shard_positions: Vec::new(),
        }
    }
}

impl PlanFile {
    /// `plan.json`'s text (`path` names it in errors), checked: its format, that its
    /// kind has its settings, its shard count. (It records no thread count: a shard's
    /// threads are its runner's.)
    pub(crate) fn parse(path: &Path, text: &str) -> Result<PlanFile, PlanError> {
        let bad = |fault: PlanFault| PlanError::file(path, fault);
        let file: PlanFile = serde_json::from_str(text).map_err(|e| bad(PlanFault::NotAPlan(e.to_string())))?;
        if file.format != PLAN_FORMAT {
            return Err(bad(PlanFault::Format { found: file.format, expected: PLAN_FORMAT }));
        }
        let kind_ok = match file.kind {
            PlanKind::Build => file.round.is_none() && file.checks.is_none(),
            PlanKind::Round => file.round.is_some() && file.checks.is_none(),
            PlanKind::Checks => file.round.is_none() && file.checks.is_some(),
        };
        if !kind_ok {
            return Err(bad(PlanFault::NotAPlan(format!("a {:?} plan without its settings", file.kind))));
        }
        super::check_shards(file.shards)?;
        Ok(file)
    }

    /// The leaf search's strength the plan records.
    pub(crate) fn strength(&self) -> Strength {
        Strength {
            depth: self.depth,
            exact_at: self.exact_at,
            time: self.time_nanos.map(Duration::from_nanos),
            nodes: self.nodes,
            selectivity: Selectivity::from_tenths(self.selectivity_tenths),
        }
    }
}

fn is_negamax(rule: &BackUpRule) -> bool {
    *rule == BackUpRule::Negamax
}

/// The part of `plan.json` a round of a deviation or a deepening adds: the growth's
/// settings (the leaf search is the plan's), where the round stands and its input.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct RoundFile {
    pub(super) growth: Growth,
    pub(super) number: u32,
    /// The round's input book, relative to the rounds directory.
    pub(super) input: PathBuf,
    pub(super) input_digest: String,
    pub(super) from_player: String,
    pub(super) from_opponent: String,
    pub(super) error: i32,
    pub(super) budget: i32,
    pub(super) contempt: i32,
    pub(super) max_ply: u32,
    pub(super) round_size: usize,
    pub(super) max_positions: Option<usize>,
    /// Leaves taken by the rounds before this one (counted against `max_positions`).
    pub(super) leaves_before: usize,
    /// Leaves this round takes.
    pub(super) leaves: usize,
    /// Where the last round's book goes.
    pub(super) book: PathBuf,
}

pub(super) fn hex(v: u64) -> String {
    format!("{v:016x}")
}

pub(super) fn plan_digest(
    max_ply: u32,
    min_games: u32,
    search: &LeafSpec,
    identity: &BuildIdentity,
    shards: u32,
) -> u64 {
    let mut d = Digest::new();
    d.update(PLAN_FORMAT.as_bytes());
    d.update(&build_identity_bytes(max_ply, min_games, search, identity));
    d.update(&shards.to_le_bytes());
    d.finish()
}

/// A plan's files name paths in JSON text, which holds UTF-8 only: a path that is not
/// is refused before anything is written.
pub(super) fn utf8_paths(paths: &[&Path]) -> Result<(), PlanError> {
    match paths.iter().find(|p| p.to_str().is_none()) {
        Some(p) => Err(PlanError::file(p, PlanFault::NotUtf8)),
        None => Ok(()),
    }
}

/// `value` as the JSON of the file at `path`.
pub(crate) fn to_json<T: Serialize>(value: &T, path: &Path) -> Result<String, PlanError> {
    serde_json::to_string_pretty(value)
        .map_err(|e| PlanError::file(path, PlanFault::Json(format!("cannot be written: {e}"))))
}
