//! FFO/Edax `.obf` problem files (`solve FILE`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| thorbook::fuzz::obf(data));
