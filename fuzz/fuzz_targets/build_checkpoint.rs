//! A build's checkpoint (`book build --resume`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| thorbook::fuzz::on_this_thread(|| thorbook::fuzz::build_checkpoint(data)));
