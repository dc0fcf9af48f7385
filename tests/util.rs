//! Running the real `thorbook` binary from tests.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// Output of one run of the binary.
pub struct Run {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    #[track_caller]
    pub fn ok(&self) -> &str {
        assert_eq!(self.status, 0, "expected success\nstdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        &self.stdout
    }

    #[track_caller]
    pub fn fails(&self) -> &str {
        assert_ne!(self.status, 0, "expected failure\nstdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        assert!(!self.stderr.contains("panicked"), "panic: {}", self.stderr);
        &self.stderr
    }
}

/// Runs `thorbook ARGS` in the crate root.
pub fn thorbook(args: &[&str]) -> Run {
    thorbook_stdin(args, "")
}

/// Runs `thorbook ARGS` with `input` on standard input.
pub fn thorbook_stdin(args: &[&str], input: &str) -> Run {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_thorbook"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the thorbook binary runs");
    child.stdin.take().unwrap().write_all(input.as_bytes()).ok();
    let Output { status, stdout, stderr } = child.wait_with_output().unwrap();
    Run {
        status: status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

/// `../shared/<rel>` next to the project root. Tests that call it are
/// `#[ignore = "needs ../shared/…"]` and named `shared_*`: `.ci/run` runs them with
/// `--ignored` where `../shared` exists, and run without it they fail loudly here
/// instead of passing without checking anything.
pub fn shared(rel: &str) -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("shared").join(rel);
    assert!(p.exists(), "{} is absent: this test needs the shared data next to the repository", p.display());
    p
}

/// Starts `thorbook ARGS` in the crate's directory with its output piped.
pub fn spawn_thorbook(args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_thorbook"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}
