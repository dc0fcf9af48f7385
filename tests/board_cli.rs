use thorbook::perft::{perft, perft_parallel};
use thorbook::Board;

use crate::util::thorbook;

const START_COUNTS: [u64; 12] = [1, 4, 12, 56, 244, 1396, 8200, 55092, 390216, 3005288, 24571284, 212258800];

#[test]
fn perft_matches_published_counts_through_depth_11() {
    for (depth, &want) in START_COUNTS.iter().enumerate() {
        assert_eq!(perft(&Board::START, depth as u32), want, "depth {depth}");
    }
}

/// About 4 s in release on 2 threads: cheap enough to run every time.
#[test]
fn perft_12() {
    assert_eq!(perft_parallel(&Board::START, 12), 1_939_886_636);
}

#[test]
fn perft_command_prints_the_count() {
    let out = thorbook(&["perft", "9"]);
    assert!(out.ok().contains("perft 9: 3005288 leaves"), "{}", out.stdout);
    let out = thorbook(&["perft", "8", "--threads", "2"]);
    assert!(out.ok().contains("perft 8: 390216 leaves"), "{}", out.stdout);
    // The 4 first moves are symmetric, so each subtree holds a quarter of perft(9).
    let out = thorbook(&["perft", "8", "--moves", "f5"]);
    assert!(out.ok().contains(&format!("perft 8: {} leaves", 3005288 / 4)), "{}", out.stdout);
}

#[test]
fn show_prints_diagram_and_moves() {
    let out = thorbook(&["show", "--moves", "f5d6"]);
    let text = out.ok();
    assert!(text.contains("legal:  c3 c4 c5 c6 c7"), "{text}");
    assert!(text.contains("black to move"));
    let out = thorbook(&["show", "--moves", "f5", "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.ok()).unwrap();
    assert_eq!(v["side_to_move"], "white");
    assert_eq!(v["legal_moves"], serde_json::json!(["f4", "d6", "f6"]));
}

#[test]
fn bad_input_names_what_and_where() {
    let err = thorbook(&["show", "--moves", "f5d6c3d3c4f4c5b3c2a1"]).fails().to_string();
    assert!(err.contains("thorbook: ply 10: a1 is not legal for white"), "{err}");
    let err = thorbook(&["show", "--moves", "f5 j9"]).fails().to_string();
    assert!(err.contains("move 2 (character 4) is not a square"), "{err}");
    let err = thorbook(&["perft", "3", "--board", "XXO"]).fails().to_string();
    assert!(err.contains("board text: only 3 squares"), "{err}");
    let err = thorbook(&["perft", "notanumber"]).fails().to_string();
    assert!(err.contains("invalid value"), "{err}");
}

/// Absurd arguments found by hand after the fuzzing: each is a clear error and a
/// non-zero exit, never a run that cannot end or a silent success.
#[test]
fn absurd_arguments_are_refused_up_front() {
    let err = thorbook(&["perft", "99"]).fails().to_string();
    assert!(err.contains("depth must be from 1 to 20, got 99"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.obf");
    std::fs::write(&empty, "% only a comment\n").unwrap();
    let err = thorbook(&["solve", empty.to_str().unwrap()]).fails().to_string();
    assert!(err.contains("empty.obf holds no positions"), "{err}");
    // A `self` engine whose options it would refuse: refused before any game (it used
    // to forfeit every game with "the engine exited" and exit 0).
    let err = thorbook(&["match", "--games", "2", "--a", "self --time 0", "--b", "self"]).fails().to_string();
    assert!(err.contains("engine `self --time 0`: --time must be a positive number"), "{err}");
    let err = thorbook(&["match", "--games", "2", "--a", "self", "--b", "self --levl 3"]).fails().to_string();
    assert!(err.contains("engine `self --levl 3`") && err.contains("--levl"), "{err}");
}

/// Output into a pipe closed by its reader (`| head`) ends the command quietly with
/// exit 0; it used to abort with exit 134 at the first `println!`.
#[test]
fn a_closed_output_pipe_ends_the_output() {
    for args in [&["book", "info"][..], &["thor", "games"], &["book", "query", "--json"], &["perft", "3"]] {
        let mut child = crate::util::spawn_thorbook(args);
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked") && !stderr.contains("Broken pipe"), "{args:?}: {stderr}");
    }
}

/// An error's cause is said once, however many layers name it.
#[test]
fn an_error_cause_is_printed_once() {
    let err = thorbook(&["book", "info", "--book", "/etc/passwd"]).fails().to_string();
    assert_eq!(err.matches("not a thorbook book").count(), 1, "{err}");
    let err = thorbook(&["book", "build", "--max-ply", "2", "-o", "/missing/dir/x.tbk"]).fails().to_string();
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
}

/// A wrong argument exits with status 2 whoever refuses it: clap, a range check of the
/// library, or the command's own check of how flags combine.
#[test]
fn wrong_arguments_exit_2_whoever_finds_them() {
    for args in [
        &["perft", "--depth", "x"][..],
        &["play", "--level", "99"],
        &["play", "--time", "-1"],
        &["eval-error", "--every", "0"],
        &["book", "audit", "--resume"],
        &["thor", "games", "--format", "wtb"],
    ] {
        let run = crate::util::thorbook(args);
        assert_eq!(run.status, 2, "{args:?}: {}", run.stderr);
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    }
}
