//! GGF games (NBoard's `set game`, `play --ggf`): what parses is written back and
//! parses to the same game, names, result and time control.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| thorbook::fuzz::on_this_thread(|| thorbook::fuzz::ggf(data)));
