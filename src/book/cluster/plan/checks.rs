//! Plans of whole-position searches: an audit's, or a fix's checks ([`Checks`]).
//!
//! The plan's positions are the run's, in key order; a shard searches each without the
//! book, as the run would, and the assembly appends the results to the run's log (a
//! [`LeafLog`] with the run's identity, kept when it already holds some of them).
//! The audit or fix started afterwards with resume finds every search in the log.

use std::path::{Path, PathBuf};

use super::error::{io, PlanError, PlanFault};
use super::spec::{hex, holds_growth, to_json, utf8_paths, ChecksFile, PlanFile, PlanKind, PLAN_FORMAT};
use super::{check_shards, Assembled, Plan, Work, PLAN_FILE};
use crate::book::build::checkpoint::positions_digest;
use crate::book::build::leaflog::{LeafLog, LeafLogError};
use crate::book::build::nodes::{write_nodes, NODES_FILE};
use crate::book::build::{LeafSpec, Node};
use crate::book::check::audit::{Checks, ChecksKind};
use crate::fileio::{atomic_write, Digest};

/// A checks plan, opened.
pub(super) struct ChecksWork {
    /// Its positions, in key order.
    pub(super) nodes: Vec<Node>,
    identity: u64,
}

fn checks_digest(search: &LeafSpec, c: &ChecksFile, log: &Path, nodes: &[Node], shards: u32) -> u64 {
    let mut d = Digest::new();
    d.update(PLAN_FORMAT.as_bytes());
    d.update(b"checks");
    d.update(format!("{:?} {} {}", c.run, c.identity, search.identity()).as_bytes());
    d.update(log.as_os_str().as_encoded_bytes());
    d.update(&positions_digest(nodes).to_le_bytes());
    d.update(&shards.to_le_bytes());
    d.finish()
}

impl Plan {
    /// Plans `checks` in `shards` shards into `dir` (created if needed); the assembly
    /// writes the results into `checks.log`. A time limit is refused (the searches
    /// would depend on the machines). Planning the same checks again is a no-op that
    /// returns the existing plan; a directory holding another plan is refused.
    pub fn create_checks(dir: &Path, checks: &Checks, shards: u32) -> Result<Plan, PlanError> {
        let plan_path = dir.join(PLAN_FILE);
        let bad = |fault: PlanFault| PlanError::file(&plan_path, fault);
        check_shards(shards)?;
        utf8_paths(&[dir, &checks.log])?;
        let search = &checks.search;
        if search.strength.time.is_some() {
            return Err(bad(PlanFault::TimeLimit));
        }
        if checks.positions.is_empty() {
            return Err(bad(PlanFault::NoPositions));
        }
        let nodes: Vec<Node> =
            checks.positions.iter().map(|&(key, board)| Node { key, board, games: 0, wins: 0, draws: 0 }).collect();
        if nodes.windows(2).any(|w| w[0].key >= w[1].key) {
            return Err(bad(PlanFault::KeysOutOfOrder));
        }
        let log = std::path::absolute(&checks.log).unwrap_or_else(|_| checks.log.clone());
        let c = ChecksFile { run: checks.kind, identity: hex(checks.identity) };
        let digest = checks_digest(search, &c, &log, &nodes, shards);
        let file = PlanFile {
            checks: Some(c),
            ..PlanFile::searched(
                PlanKind::Checks,
                shards,
                log,
                search,
                &checks.eval,
                nodes.len(),
                positions_digest(&nodes),
                digest,
            )
        };
        if plan_path.exists() {
            let existing = Plan::open_dir(dir)?;
            if existing.digest == digest {
                return Ok(existing);
            }
            return Err(bad(PlanFault::OtherPlan));
        }
        if holds_growth(dir) {
            return Err(bad(PlanFault::HoldsGrowth));
        }
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        write_nodes(&dir.join(NODES_FILE), &nodes)?;
        let json = to_json(&file, &plan_path)?;
        atomic_write(&plan_path, json.as_bytes()).map_err(io(&plan_path))?;
        Plan::open_dir(dir)
    }

    /// Opens a checks plan (its evaluation already checked): its settings must match
    /// its digest.
    pub(super) fn open_checks(
        dir: &Path,
        file: PlanFile,
        c: ChecksFile,
        nodes: Vec<Node>,
        search: LeafSpec,
    ) -> Result<Plan, PlanError> {
        let plan_path = dir.join(PLAN_FILE);
        let bad = |fault: PlanFault| PlanError::file(&plan_path, fault);
        let identity = u64::from_str_radix(&c.identity, 16).map_err(|_| bad(PlanFault::DigestMismatch))?;
        let digest = checks_digest(&search, &c, &file.output, &nodes, file.shards);
        if hex(digest) != file.digest || nodes.len() != file.positions || file.time_nanos.is_some() {
            return Err(bad(PlanFault::DigestMismatch));
        }
        let keys: Vec<u64> = nodes.iter().map(|n| n.key).collect();
        let work = Work::Checks(Box::new(ChecksWork { nodes, identity }));
        Ok(Plan { dir: dir.to_path_buf(), file, keys: std::sync::OnceLock::from(keys), search, digest, work })
    }

    /// Appends every shard's results that the log lacks to the run's log (`output`,
    /// else the plan's), after checking all shards.
    pub(super) fn assemble_checks(&self, c: &ChecksWork, output: Option<&Path>) -> Result<Assembled, PlanError> {
        let mut results = Vec::with_capacity(self.positions());
        for index in 0..self.file.shards {
            results.extend(self.read_shard(index)?);
        }
        let path: PathBuf = output.unwrap_or(&self.file.output).to_path_buf();
        let log_error = |e: LeafLogError| match e {
            LeafLogError::Io(e) => PlanError::Io(e),
            LeafLogError::Foreign { path, .. } => PlanError::file(&path, PlanFault::ForeignLog),
            LeafLogError::Locked { path } => PlanError::file(&path, PlanFault::LogLocked),
            LeafLogError::Damaged { path, index, byte, fault } => {
                PlanError::file(&path, PlanFault::DamagedLog { index: index as u64, byte: byte as u64, fault })
            }
        };
        let (log, done) =
            LeafLog::open(&path, c.identity, self.search.selectivity_tenths(), true).map_err(log_error)?;
        for (key, leaf) in results.iter().filter(|(key, _)| !done.contains_key(key)) {
            log.append(*key, leaf).map_err(log_error)?;
        }
        log.sync().map_err(log_error)?;
        let size = std::fs::metadata(&path).map_err(io(&path))?.len();
        Ok(Assembled { positions: results.len() as u64, size, after: None })
    }

    /// For a checks plan: whose searches they are.
    pub(crate) fn checks_run(&self) -> Option<ChecksKind> {
        self.file.checks.as_ref().map(|c| c.run)
    }
}
