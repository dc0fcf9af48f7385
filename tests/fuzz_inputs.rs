//! Replays through the fuzz targets' checks (`thorbook::fuzz`) every input a fuzzer
//! found crashing (`tests/fuzz_regressions/TARGET/NAME`, kept for good once fixed) and
//! every seed (`fuzz/seeds/TARGET/NAME`), so the normal suite guards both without
//! the nightly toolchain.

use std::path::Path;

use thorbook::fuzz;

/// Replays every file under `dir/TARGET/`; returns how many ran.
fn replay_all(dir: &Path) -> usize {
    let mut ran = 0;
    let mut targets: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    targets.sort();
    for target_dir in targets {
        let target = target_dir.file_name().unwrap().to_string_lossy().into_owned();
        assert!(fuzz::TARGETS.iter().any(|(name, _)| *name == target), "{} is not a fuzz target", target_dir.display());
        let mut inputs: Vec<_> = std::fs::read_dir(&target_dir).unwrap().map(|e| e.unwrap().path()).collect();
        inputs.sort();
        for input in inputs {
            // Printed so that a failing replay names its file.
            eprintln!("replaying {}", input.display());
            assert!(fuzz::run(&target, &std::fs::read(&input).unwrap()));
            ran += 1;
        }
    }
    ran
}

#[test]
fn inputs_that_once_crashed_run_clean() {
    let ran = replay_all(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_regressions"));
    assert!(ran >= 1, "no regression inputs found");
}

#[test]
fn every_target_has_seeds_and_they_run_clean() {
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds");
    for (target, _) in fuzz::TARGETS {
        assert!(seeds.join(target).read_dir().is_ok_and(|mut d| d.next().is_some()), "no seeds for {target}");
    }
    assert!(replay_all(&seeds) >= fuzz::TARGETS.len());
}

#[test]
fn the_fuzz_crate_lists_every_target() {
    let manifest = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/Cargo.toml")).unwrap();
    for (target, _) in fuzz::TARGETS {
        assert!(manifest.contains(&format!("name = \"{target}\"")), "fuzz/Cargo.toml has no target {target}");
    }
    assert!(!fuzz::run("no_such_target", b""));
}
