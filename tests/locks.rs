//! Files on a file system that cannot lock (Lustre without `-o flock`, NFS without a
//! lock manager), stood in for by an `LD_PRELOAD` shim whose `flock` fails with ENOLCK:
//! the label store, self-play's output and a build's checkpoint are used unlocked, each
//! with a warning, and the work is the same as where locks work.

use std::path::Path;
use std::process::{Command, Output};

fn run(args: &[&str], preload: Option<&Path>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_thorbook"));
    command.args(args);
    if let Some(lib) = preload {
        command.env("LD_PRELOAD", lib);
    }
    let out = command.output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[cfg(target_os = "linux")]
#[test]
fn where_flock_fails_with_enolck_every_locked_file_is_used_unlocked_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let lib = crate::util::no_flock_shim(dir.path());
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let refused = format!("the file system refuses locks ({})", std::io::Error::from_raw_os_error(libc::ENOLCK));

    // The label store: a shard of `labels solve`, then a second run that finds it whole.
    let solve = |store: &str, preload| {
        run(&["labels", "solve", "--solve-at", "8", "--threads", "1", "--every", "20", "--labels", store], preload)
    };
    let first = solve(&p("unlocked.tbl"), Some(&lib));
    assert!(stderr(&first).contains(&format!("warning: {}: {refused}", p("unlocked.tbl"))), "{}", stderr(&first));
    let again = solve(&p("unlocked.tbl"), Some(&lib));
    assert!(stderr(&again).contains(&refused) && stderr(&again).contains(", 0 solved now"), "{}", stderr(&again));
    let locked = solve(&p("locked.tbl"), None);
    assert!(!stderr(&locked).contains("refuses locks"), "{}", stderr(&locked));
    assert_eq!(std::fs::read(p("unlocked.tbl")).unwrap(), std::fs::read(p("locked.tbl")).unwrap());

    // Self-play's output.
    let selfplay = |out: &str, preload| {
        run(&["selfplay", "--games", "4", "--depth", "2", "--book-randomness", "3", "--seed", "7", "-o", out], preload)
    };
    let unlocked = selfplay(&p("unlocked.txt"), Some(&lib));
    assert!(stderr(&unlocked).contains(&refused), "{}", stderr(&unlocked));
    selfplay(&p("locked.txt"), None);
    assert_eq!(std::fs::read(p("unlocked.txt")).unwrap(), std::fs::read(p("locked.txt")).unwrap());

    // A book build's checkpoint.
    let build = |out: &str, preload| {
        run(
            &["book", "build", "--max-ply", "6", "--min-games", "1", "--level", "2", "--threads", "1", "-o", out],
            preload,
        )
    };
    let unlocked = build(&p("unlocked.tbk"), Some(&lib));
    assert!(stderr(&unlocked).contains(&refused), "{}", stderr(&unlocked));
    build(&p("locked.tbk"), None);
    assert_eq!(std::fs::read(p("unlocked.tbk")).unwrap(), std::fs::read(p("locked.tbk")).unwrap());
}
