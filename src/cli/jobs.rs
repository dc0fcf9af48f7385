//! How a command's long work stops on Ctrl-C: a stop flag the library's pipelines
//! watch (finishing what is under way and keeping what is done), or an engine's own stop
//! handle; a second Ctrl-C quits at once.

use crate::engine::Engine;
use crate::work::StopHandle;

/// A stop flag that Ctrl-C sets: long work stops after `what` (the batches running,
/// the games in hand), keeping what it finished; a second Ctrl-C quits at once.
pub(super) fn stop_on_ctrl_c(what: &str) -> anyhow::Result<StopHandle> {
    let what = what.to_string();
    let stop = StopHandle::new();
    let handle = stop.clone();
    ctrlc::set_handler(move || {
        if handle.is_stopped() {
            std::process::exit(130);
        }
        handle.stop();
        eprintln!("\nstopping after {what} (Ctrl-C again to quit at once)");
    })?;
    Ok(stop)
}

/// Ctrl-C stops the engine's search; the command prints what it found.
pub(super) fn stop_engine_on_ctrl_c(engine: &Engine) -> anyhow::Result<()> {
    let stop = engine.stop_handle();
    ctrlc::set_handler(move || stop.stop())?;
    Ok(())
}
