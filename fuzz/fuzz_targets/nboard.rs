//! NBoard sessions: any sequence of lines, parsed and handled as `thorbook nboard`
//! does, driving the engine with the bundled book and evaluation. `set depth N` is
//! clamped to 1..=3 here so each input runs in milliseconds; everything else is as sent.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| thorbook::fuzz::on_this_thread(|| thorbook::fuzz::nboard(data)));
