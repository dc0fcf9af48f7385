//! GTP sessions: any sequence of lines through the real loop (`thorbook gtp`), driving
//! the engine with the bundled book and evaluation. The engine is kept shallow (depth 2,
//! exact at 6 empties, 20,000 nodes) so that each input runs in milliseconds; the
//! protocol cannot deepen it (GTP's time commands only lower a budget).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| thorbook::fuzz::on_this_thread(|| thorbook::fuzz::gtp(data)));
