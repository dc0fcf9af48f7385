//! A build's checkpoint (`book build --resume`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| thorbook::fuzz::build_checkpoint(data));
