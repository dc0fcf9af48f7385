//! What users type for a position: board text (`--board`, FFO/Edax style) and move
//! sequences (`--moves`). What parses round-trips through thorbook's own notation.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| thorbook::fuzz::on_this_thread(|| thorbook::fuzz::position_text(data)));
