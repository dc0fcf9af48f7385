//! Book builds stopped and resumed: the library's builder and its checkpoint, a
//! stopped build's leaves, an interrupted `book build` resumed to the same book.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use thorbook::book::{BuildError, BuildInput, CheckpointFault, EntryFault};

use crate::book::{bundled_games, config};
use crate::util::{build_book_bytes, thorbook};

#[test]
fn the_library_builder_reports_progress_and_resumes_from_its_checkpoint() {
    use std::sync::Mutex;
    use thorbook::book::{BuildEvent, Builder};
    let dir = tempfile::tempdir().unwrap();
    let games = bundled_games(60);
    let out = dir.path().join("lib.tbk");
    let events = Mutex::new(Vec::new());
    let summary = Builder::new(config(10, 3, 0), &out).run(&games, &|e| events.lock().unwrap().push(e)).unwrap();
    let events = events.into_inner().unwrap();
    let BuildEvent::Collected { positions, games: n } = events[0] else { panic!("{:?}", events[0]) };
    assert_eq!((positions, n), (summary.positions, 60));
    let scored: Vec<u64> = events
        .iter()
        .filter_map(|e| if let BuildEvent::Scored { done, .. } = e { Some(*done) } else { None })
        .collect();
    assert_eq!(scored.len() as u64, summary.searched);
    let written = std::fs::read(&out).unwrap();
    assert_eq!(written.len() as u64, summary.size);
    assert!(written == build_book_bytes(&games, &config(10, 3, 0)), "a second build writes the same book");
    assert!(!Builder::new(config(10, 3, 0), &out).checkpoint_path().exists(), "checkpoint left behind");

    // A build whose final write fails (the output path is a directory) keeps its
    // checkpoint; resuming it searches nothing and writes the same book, and a
    // resume with other games is refused.
    let target = dir.path().join("blocked.tbk");
    std::fs::create_dir(&target).unwrap();
    let err = Builder::new(config(10, 3, 0), &target).run(&games, &|_| {}).unwrap_err();
    assert!(matches!(&err, BuildError::Io(e) if e.path == target), "{err}");
    std::fs::remove_dir(&target).unwrap();
    let other = Builder::new(config(10, 3, 0), &target).resume(true).run(&bundled_games(61), &|_| {});
    let games_differ = CheckpointFault::Differs { field: BuildInput::Games };
    assert!(matches!(other, Err(BuildError::Checkpoint { why, .. }) if why == games_differ));
    // A damaged entry is refused, not carried into the book: a flipped byte fails its
    // checksum; a move code that is no square fails even with a checksum that fits.
    let checkpoint = Builder::new(config(10, 3, 0), &target).checkpoint_path();
    let intact = std::fs::read(&checkpoint).unwrap();
    // Entries of 16 bytes (12 of data, a CRC-32) follow a 64-byte header; damage the last one.
    let entry = (intact.len() - 64) / 16 - 1;
    let at = 64 + 16 * entry;
    let resume_err = |bytes: &[u8]| {
        std::fs::write(&checkpoint, bytes).unwrap();
        match Builder::new(config(10, 3, 0), &target).resume(true).run(&games, &|_| {}) {
            Err(BuildError::Checkpoint { why, .. }) => why,
            other => panic!("{other:?}"),
        }
    };
    let mut flipped = intact.clone();
    flipped[at + 9] ^= 0x04;
    let err = resume_err(&flipped);
    assert_eq!(err, CheckpointFault::Damaged { index: entry, byte: at, fault: EntryFault::Checksum });
    let mut bad_move = intact.clone();
    bad_move[at + 8] = 99;
    let crc = crc32fast::hash(&bad_move[at..at + 12]);
    bad_move[at + 12..at + 16].copy_from_slice(&crc.to_le_bytes());
    let err = resume_err(&bad_move);
    assert!(
        matches!(err, CheckpointFault::Damaged { index, byte, fault: EntryFault::Range { code: 99, .. } } if index == entry && byte == at),
        "{err}"
    );
    std::fs::write(&checkpoint, &intact).unwrap();
    let events = Mutex::new(Vec::new());
    let resumed =
        Builder::new(config(10, 3, 0), &target).resume(true).run(&games, &|e| events.lock().unwrap().push(e)).unwrap();
    assert_eq!(resumed.searched, 0);
    assert!(events.into_inner().unwrap().contains(&BuildEvent::Resumed { scored: summary.positions }));
    assert_eq!(std::fs::read(&target).unwrap(), written);
}

/// A stop flag set after some leaves were scored stops the build between leaves: no
/// book is written, the checkpoint keeps those leaves, and a resumed build searches
/// only the rest and writes the book of an uninterrupted one.
#[test]
fn a_stopped_build_keeps_its_leaves_and_resumes_to_the_same_book() {
    use thorbook::book::{BuildEvent, Builder};
    use thorbook::work::StopHandle;
    let dir = tempfile::tempdir().unwrap();
    let games = bundled_games(60);
    let whole = dir.path().join("whole.tbk");
    let summary = Builder::new(config(10, 3, 0), &whole).run(&games, &|_| {}).unwrap();
    let out = dir.path().join("stopped.tbk");
    let stop = StopHandle::new();
    let err = Builder::new(config(10, 3, 0), &out)
        .stop_on(stop.clone())
        .run(&games, &|e| {
            if let BuildEvent::Scored { done: 10, .. } = e {
                stop.stop();
            }
        })
        .unwrap_err();
    assert!(matches!(err, BuildError::Interrupted), "{err}");
    assert!(!out.exists(), "no book is written by a stopped build");
    let resumed = Builder::new(config(10, 3, 0), &out).resume(true).run(&games, &|_| {}).unwrap();
    assert!(resumed.searched < summary.searched, "{} of {} searched again", resumed.searched, summary.searched);
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&whole).unwrap());
}

#[test]
fn an_interrupted_build_resumes_to_the_same_book() {
    let dir = tempfile::tempdir().unwrap();
    let full = dir.path().join("full.tbk");
    let resumed = dir.path().join("resumed.tbk");
    let args = |out: &std::path::Path| {
        vec![
            "book".to_string(),
            "build".into(),
            "-o".into(),
            out.display().to_string(),
            "--max-ply".into(),
            "14".into(),
            "--depth".into(),
            "7".into(),
            "--threads".into(),
            "2".into(),
        ]
    };
    thorbook(&args(&full).iter().map(String::as_str).collect::<Vec<_>>()).ok();
    // Start again, kill it once part of the work is checkpointed, then resume.
    let ckpt = dir.path().join("resumed.tbk.checkpoint");
    let mut child = Command::new(env!("CARGO_BIN_EXE_thorbook"))
        .args(args(&resumed))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while std::fs::metadata(&ckpt).map_or(0, |m| m.len()) < 64 + 16 * 200 && start.elapsed() < Duration::from_secs(120)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!resumed.exists(), "the build finished before it could be interrupted");
    let scored = (std::fs::metadata(&ckpt).unwrap().len() - 64) / 16;
    assert!(scored >= 200);
    // Resuming with other inputs is refused, naming what differs, and leaves the
    // checkpoint as it was.
    let before = std::fs::read(&ckpt).unwrap();
    for (extra, what) in [
        (vec!["data/thor/WTH_2014.wtb"], "other games"),
        (vec!["--exact-at", "20"], "other build parameters"),
        (vec!["--classic-eval"], "another evaluation"),
        (vec!["--min-games", "3"], "other build parameters"),
        (vec!["--hash-mib", "8"], "another table size"),
    ] {
        let mut a = args(&resumed);
        a.push("--resume".into());
        a.extend(extra.iter().map(|s| s.to_string()));
        let out = thorbook(&a.iter().map(String::as_str).collect::<Vec<_>>());
        let err = out.fails();
        assert!(err.contains(what) && err.contains("(run without --resume)"), "{extra:?}: {err}");
        assert_eq!(std::fs::read(&ckpt).unwrap(), before, "a refused resume changed the checkpoint");
    }
    let mut resume_args = args(&resumed);
    resume_args.push("--resume".into());
    let out = thorbook(&resume_args.iter().map(String::as_str).collect::<Vec<_>>());
    out.ok();
    assert!(out.stderr.contains(&format!("resuming: {scored} positions already scored")), "{}", out.stderr);
    assert!(std::fs::read(&full).unwrap() == std::fs::read(&resumed).unwrap(), "resumed build differs");
    assert!(!ckpt.exists(), "checkpoint removed after success");
}
