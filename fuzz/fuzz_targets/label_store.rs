//! A training label store (`train --labels`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| thorbook::fuzz::label_store(data));
